import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { screenResult, strategyCatalogue } from '@vault-yield/domain';
import { createLogAdmin, createPublisher } from '@vault-yield/log';
import { createPgPool, liveSchema, schemaExists } from '@vault-yield/store';
import type { Command } from '../command.js';
import { type PublishEnv, publishEnvSchema } from '../config.js';
import type { CliContext } from '../context.js';
import { liveSources, namedTopics, refuseOtherTopics } from '../ops/live-topics.js';

const kinds = {
  screen: { schema: screenResult, topic: 'SCREEN_TOPIC', key: 'screen' },
  catalogue: { schema: strategyCatalogue, topic: 'CATALOGUE_TOPIC', key: 'catalogue' },
} as const;
type Kind = keyof typeof kinds;

/** Validates a screen or catalogue file; returns the problems as `path: message` lines. */
export function validateStrategyFile(
  kind: Kind,
  text: string,
): { ok: true; value: unknown } | { ok: false; errors: string[] } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, errors: [`(file): not valid JSON: ${(e as Error).message}`] };
  }
  const parsed = kinds[kind].schema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  return {
    ok: false,
    errors: parsed.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`),
  };
}

export const publishCommand: Command<typeof publishEnvSchema> = {
  env: publishEnvSchema,
  log: { name: 'publish' },
  help: `usage: vault-yield publish <screen|catalogue> FILE [--dry-run]

Validates FILE (JSON) against the screen-result or strategy-catalogue schema and publishes it to
the topic the live projection reads (the views schema's target, else PROJECTION_SCHEMA: its
stored offsets name the topic), so the entry reaches /v1/strategies. SCREEN_TOPIC /
CATALOGUE_TOPIC naming another topic is refused in one line naming the live one (exit 2). A file
that fails validation is refused with each problem's path and message, and nothing is published
(exit 1).

options:
  --dry-run   validate only

environment:
  KAFKA_BROKERS     comma-separated host:port list (required unless --dry-run)
  DATABASE_URL      where the live projection is read (unset: the topic is not checked)
  VIEWS_SCHEMA, PROJECTION_SCHEMA  which projection is live
  SCREEN_TOPIC      unset: the live projection's (else default screen-results)
  CATALOGUE_TOPIC   unset: the live projection's (else default strategy-catalogue)`,
  async run(argv, context) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { 'dry-run': { type: 'boolean', default: false } },
    });
    const [kind, file] = positionals;
    if ((kind !== 'screen' && kind !== 'catalogue') || !file || positionals.length > 2) {
      console.error('usage: vault-yield publish <screen|catalogue> FILE [--dry-run]');
      return 2;
    }
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      console.error(`cannot read ${file}: ${(e as Error).message}`);
      return 1;
    }
    const result = validateStrategyFile(kind, text);
    if (!result.ok) {
      console.error(
        `refused ${file}: not a valid ${kind} (nothing was published)\n${result.errors.map((e) => `  ${e}`).join('\n')}`,
      );
      return 1;
    }
    if (values['dry-run']) {
      console.log(`${file}: valid ${kind}`);
      return 0;
    }
    const ctx = context();
    let target: { topic: string; note: string };
    try {
      target = await targetTopic(kind, ctx);
    } catch (err) {
      if (err instanceof TypeError && 'code' in err) throw err;
      const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
      console.error(
        `publish: cannot read which topic the live projection reads (${why}); nothing was published`,
      );
      return 1;
    }
    const { topic, note } = target;
    const client = { ...ctx.kafka!, clientId: 'vault-yield-cli' };
    const admin = await createLogAdmin(client);
    try {
      await admin.ensureTopic({ topic, partitions: 1 });
    } finally {
      await admin.close();
    }
    const publisher = await createPublisher({ ...client, topic });
    try {
      await publisher.publishRaw([
        { key: kinds[kind].key, value: Buffer.from(JSON.stringify(result.value)) },
      ]);
    } finally {
      await publisher.close();
    }
    console.log(`published ${kind} ${file} to ${topic}${note}`);
    return 0;
  },
};

/**
 * The topic to publish a `kind` to: the one the live projection reads (the views schema's target,
 * else PROJECTION_SCHEMA; its build record or stored offsets name it), so the entry reaches
 * `/v1/strategies`. An environment naming another is refused (usage error, nothing published);
 * without DATABASE_URL, or before the live projection folded that side, the environment's.
 */
async function targetTopic(
  kind: Kind,
  ctx: CliContext<PublishEnv>,
): Promise<{ topic: string; note: string }> {
  const { config } = ctx;
  const fallback = config[kinds[kind].topic];
  if (!config.DATABASE_URL)
    return { topic: fallback, note: ' (DATABASE_URL unset: not checked against the live projection)' };
  const pool = createPgPool({ url: config.DATABASE_URL, applicationName: 'vault-yield-publish', max: 1 });
  try {
    const live = (await liveSchema(pool, config.VIEWS_SCHEMA)) ?? config.PROJECTION_SCHEMA;
    if (!(await schemaExists(pool, live)))
      return { topic: fallback, note: ` (no live projection: schema ${live} does not exist)` };
    const sources = await liveSources(pool, config.VIEWS_SCHEMA, live);
    refuseOtherTopics('publish', live, sources, namedTopics(ctx), [kind]);
    const source = sources[kind];
    return source
      ? { topic: source.topic, note: `, the topic the live projection ${live} reads` }
      : { topic: fallback, note: ` (the live projection ${live} has folded no ${kind} yet)` };
  } finally {
    await pool.end();
  }
}
