/**
 * compose's `views` service (after `migrate`, before the reader): the reader reads the views schema
 * (VIEWS_SCHEMA, default vault_yield_api), which `vault-yield rebuild` switches atomically. On a
 * fresh database nothing is live yet, so this points the views at PROJECTION_SCHEMA once
 * (`rebuild switch --schema` without needing Kafka). Once a schema is live — the first bootstrap's
 * or one a rebuild switched to — it is left as it is: `up` never switches a rebuild back.
 * Compiled into the image by infra/docker/build.ts (deploy/views-bootstrap.js).
 */
import { createPgPool, liveSchema, switchLive } from '@vault-yield/store';

const url = process.env.DATABASE_URL;
if (!url) {
  console.error('views-bootstrap: DATABASE_URL is unset');
  process.exit(2);
}
const views = process.env.VIEWS_SCHEMA ?? 'vault_yield_api';
const target = process.env.PROJECTION_SCHEMA ?? 'vault_yield';
const readerRole = process.env.READER_ROLE;
// The runtime writer (DML only) reads which schema is live: the projector follows it (FOLLOW_LIVE).
const writerRole = process.env.WRITER_ROLE;
const pool = createPgPool({ url, applicationName: 'vault-yield-views-bootstrap', max: 1 });
try {
  const live = await liveSchema(pool, views);
  if (live) {
    console.log(`views-bootstrap: ${views} already points at ${live}; left as it is`);
  } else {
    const r = await switchLive(pool, {
      viewsSchema: views,
      target,
      ...(readerRole ? { readerRole } : {}),
      ...(writerRole ? { writerRole } : {}),
    });
    console.log(`views-bootstrap: ${views} → ${r.target}: ${r.views.length} views`);
  }
} finally {
  await pool.end();
}
