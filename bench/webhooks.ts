/**
 * Webhook deliveries per second to a local receiver (#28 item 3's figure).
 *
 *   npm run bench:webhooks [-- --rows 20000 --vaults 100 --concurrency 16]
 *
 * A fresh database gets one endpoint (every vault) and `rows` ledger rows spread over `vaults`
 * vaults; then the deliverer (services/webhooks) starts as its own process and delivers them to a
 * receiver on 127.0.0.1 that answers 200 at once. Measured: from the deliverer's start to the
 * last row received (its start-up, ≈ 1–2 s of tsx, excluded by timing from the first delivery).
 * Ends with `webhooks: N deliveries/s (…)`.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { dropDatabase, ensureProjectDatabase } from '@vault-yield/devstack/postgres';
import { createPgPool, createWebhookStore, migrate } from '@vault-yield/store';
import { insertLedger, type LedgerSpec, randomAddress, writer } from '@vault-yield/test-kit/reader';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    vaults: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '16' },
  },
});
const ROWS = Number(values.rows);
const VAULTS = Number(values.vaults);
const CONCURRENCY = Number(values.concurrency);
const adminUrl = process.env.DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SCHEMA = 'vault_yield';

const name = `bench_webhooks_${randomBytes(3).toString('hex')}`;
const db = await ensureProjectDatabase(adminUrl, name);
const pool = createPgPool({ url: db.writerUrl, applicationName: 'bench-webhooks', max: 2 });
let received = 0;
let first = 0;
let last = 0;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    received++;
    last = performance.now();
    if (received === 1) first = last;
    res.writeHead(200);
    res.end();
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
const address = server.address();
const port = address && typeof address === 'object' ? address.port : 0;

try {
  await migrate(pool, SCHEMA);
  const store = createWebhookStore(pool, SCHEMA);
  await store.addEndpoint({
    url: `http://127.0.0.1:${port}/hook`,
    secret: `whsec_${randomBytes(32).toString('base64')}`,
    vaults: null,
    types: null,
    ledgerSchema: SCHEMA,
  });
  const w = writer(db.writerUrl, SCHEMA);
  const vaults = Array.from({ length: VAULTS }, () => randomAddress());
  const types = ['deposit', 'withdrawal', 'fee.charged'] as const;
  let specs: LedgerSpec[] = [];
  for (let i = 0; i < ROWS; i++) {
    specs.push({
      vault: vaults[i % VAULTS] ?? vaults[0]!,
      type: types[i % types.length] ?? 'deposit',
      blockNumber: 1_000 + Math.floor(i / VAULTS),
    });
    if (specs.length === 2_000) {
      await insertLedger(w, specs);
      specs = [];
    }
  }
  await insertLedger(w, specs);
  await w.end();

  const started = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'services/webhooks/src/main.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: db.writerUrl,
      PROJECTION_SCHEMA: SCHEMA,
      VIEWS_SCHEMA: 'bench_no_views',
      WEBHOOK_CONCURRENCY: String(CONCURRENCY),
      // One receiver, on 127.0.0.1: allowed, and every slot may go to it.
      WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8',
      WEBHOOK_ENDPOINT_CONCURRENCY: String(CONCURRENCY),
      // The deliverer refuses to run without it (it seals the endpoint's plaintext secret at once).
      WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  while (received < ROWS) {
    if (performance.now() - started > 600_000)
      throw new Error(`only ${received} of ${ROWS} delivered in 10 min`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise<void>((resolve) => {
    child.on('exit', () => resolve());
    child.kill('SIGTERM');
  });
  const seconds = (last - first) / 1000;
  const rate = Math.round((ROWS - 1) / seconds);
  console.log(
    `webhooks: ${rate} deliveries/s (${ROWS} rows over ${VAULTS} vaults, 1 endpoint, concurrency ${CONCURRENCY}, local receiver answering 200; first to last delivery ${seconds.toFixed(2)} s)`,
  );
} finally {
  server.close();
  await pool.end();
  await dropDatabase(adminUrl, name);
}
