import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@vault-yield/common';
import { ROLES } from '@vault-yield/devstack/postgres';
import { createLogAdmin, createPublisher } from '@vault-yield/log';
import { createStrategyProjector, type StrategyProjector } from '@vault-yield/projector';
import { createPgPool, type Pool } from '@vault-yield/store';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { makeCatalogue, makeScreen } from '@vault-yield/test-kit/screen';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './run.js';

describe('vault-yield publish', () => {
  const dir = mkdtempSync(join(tmpdir(), 'publish-'));
  const screenTopic = uniqueTopic('screen');
  const catalogueTopic = uniqueTopic('catalogue');
  const env = {
    KAFKA_BROKERS: kafkaBrokers().join(','),
    SCREEN_TOPIC: screenTopic,
    CATALOGUE_TOPIC: catalogueTopic,
  };
  const file = (name: string, content: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
    return path;
  };
  /** Which of the two topics exist and hold at least one message. */
  const topics = async () => {
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'test' });
    try {
      const existing = new Set(await admin.listTopics());
      const withData = new Set<string>();
      for (const t of [screenTopic, catalogueTopic]) {
        if (existing.has(t) && (await admin.offsets(t)).some((o) => o.high !== '0')) withData.add(t);
      }
      return withData;
    } finally {
      await admin.close();
    }
  };
  afterAll(async () => {
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'test' });
    for (const t of [screenTopic, catalogueTopic]) await admin.deleteTopic(t);
    await admin.close();
  });

  it('refuses a bad screen with the zod path and message, and publishes nothing', async () => {
    const badCategory = makeScreen('bad', 1000) as unknown as { assets: { category: string }[] };
    badCategory.assets[1]!.category = 'shitcoin';
    const res = await runCli(['publish', 'screen', file('bad-screen.json', badCategory)], env);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/nothing was published/);
    expect(res.stderr).toMatch(/assets\.1\.category: .*major.*stable.*stock token.*meme/);

    const unknownAsset = makeScreen('bad', 1000) as unknown as { pairs: { a: string }[] };
    unknownAsset.pairs[0]!.a = 'NOPE';
    const res2 = await runCli(['publish', 'screen', file('bad-screen-2.json', unknownAsset)], env);
    expect(res2.code).toBe(1);
    expect(res2.stderr).toMatch(/pairs\.0\.a: asset NOPE is not in assets/);
    expect(await topics()).toEqual(new Set());
  });

  it('refuses a bad catalogue and a file that is not JSON', async () => {
    const bad = makeCatalogue(1000) as unknown as { strategies: { id: string }[] };
    bad.strategies[1]!.id = bad.strategies[0]!.id;
    const dup = await runCli(['publish', 'catalogue', file('bad-catalogue.json', bad)], env);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/strategies\.1\.id: duplicate id steady-eth/);
    const notJson = await runCli(['publish', 'catalogue', file('garbage.json', '{"strategies": [')], env);
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toMatch(/not valid JSON/);
    expect(await topics()).toEqual(new Set());
  });

  it('publishes a valid screen and a valid catalogue to their topics', async () => {
    const screen = await runCli(['publish', 'screen', file('screen.json', makeScreen('ok', 1000))], env);
    expect(screen.stderr).toBe('');
    expect(screen.code).toBe(0);
    const catalogue = await runCli(
      ['publish', 'catalogue', file('catalogue.json', makeCatalogue(1000))],
      env,
    );
    expect(catalogue.code).toBe(0);
    expect(await topics()).toEqual(new Set([screenTopic, catalogueTopic]));
  });

  it('prints usage for a missing kind and help for --help', async () => {
    expect((await runCli(['publish'], env)).code).toBe(2);
    const help = await runCli(['publish', '--help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/usage: vault-yield publish <screen\|catalogue> FILE/);
  });
});

/**
 * `publish` against a running stack whose market topics carry a prefix, as dev's do
 * (`<prefix>-strategy-catalogue`), with the README's environment only (#48 item 4): the entry goes
 * to the topic the live projection reads and reaches its `strategies` table; an environment
 * naming another topic is refused in one line naming the live one, and nothing is published.
 */
describe('vault-yield publish to the live projection', () => {
  const prefix = uniqueTopic('pdev');
  const screenTopic = `${prefix}-screen-results`;
  const catalogueTopic = `${prefix}-strategy-catalogue`;
  const log = createLogger({ name: 'publish-live-test', level: 'silent' });
  let db: TestDatabase;
  let pool: Pool;
  let marketPool: Pool;
  let market: StrategyProjector;
  let env: Record<string, string>;
  const dir = mkdtempSync(join(tmpdir(), 'publish-live-'));
  const nameOf = async (id: string) =>
    (await pool.query<{ name: string }>(`select name from ${db.schema}.strategies where id = $1`, [id]))
      .rows[0]?.name;
  const high = async (topic: string) => {
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'test' });
    try {
      return (await admin.offsets(topic)).map((o) => o.high).join(',');
    } finally {
      await admin.close();
    }
  };

  beforeAll(async () => {
    db = await createTestDatabase('publish_live', { split: true });
    pool = createPgPool({ url: db.migratorUrl, applicationName: 'publish-live-test', max: 1 });
    const brokers = kafkaBrokers();
    const admin = await createLogAdmin({ brokers, clientId: 'test' });
    for (const t of [screenTopic, catalogueTopic]) await admin.ensureTopic({ topic: t, partitions: 1 });
    await admin.close();
    for (const [t, key, value] of [
      [catalogueTopic, 'catalogue', makeCatalogue(1_000)],
      [screenTopic, 'screen', makeScreen('s1', 2_000)],
    ] as const) {
      const p = await createPublisher({ brokers, clientId: 'publish-live-test', topic: t });
      await p.publishRaw([{ key, value: Buffer.from(JSON.stringify(value)) }]);
      await p.close();
    }
    // The live market side as `npm start` runs it: the writer role, the default group.
    marketPool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'market', max: 2 });
    market = createStrategyProjector({
      brokers,
      pool: marketPool,
      logger: log,
      screenTopic,
      catalogueTopic,
      groupId: 'vault-yield-market',
      statsIntervalMs: 0,
      minDailyReturns: 30,
    });
    await market.start();
    const deadline = Date.now() + 30_000;
    while ((await nameOf('steady-eth')) !== 'Steady ETH') {
      if (Date.now() > deadline) throw new Error('the catalogue was never folded');
      await new Promise((r) => setTimeout(r, 200));
    }
    env = {
      DATABASE_URL: db.writerUrl,
      MIGRATE_DATABASE_URL: db.migratorUrl,
      WRITER_ROLE: ROLES.writer,
      KAFKA_BROKERS: brokers.join(','),
      KAFKA_TOPIC: `${prefix}-vault-records`,
      // Unset (an empty value is unset): the defaults name other topics than the stack's.
      SCREEN_TOPIC: '',
      CATALOGUE_TOPIC: '',
      VIEWS_SCHEMA: '',
      PROJECTION_SCHEMA: '',
    };
    const sw = await runCli(['rebuild', 'switch', '--schema', db.schema], env);
    expect(sw.code, sw.stderr).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await market?.stop();
    await marketPool?.end();
    await pool?.end();
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'test' });
    for (const t of [screenTopic, catalogueTopic]) await admin.deleteTopic(t).catch(() => {});
    await admin.close();
    await db?.drop();
  });

  it('publishes a catalogue where the live projection reads: it reaches its strategies', async () => {
    const path = join(dir, 'catalogue.json');
    writeFileSync(path, JSON.stringify(makeCatalogue(5_000, { 'steady-eth': 'Steady ETH, renamed' })));
    const res = await runCli(['publish', 'catalogue', path], env);
    expect(res.stderr).toBe('');
    expect(res.stdout).toContain(`to ${catalogueTopic}, the topic the live projection ${db.schema} reads`);
    expect(res.code).toBe(0);
    const deadline = Date.now() + 30_000;
    while ((await nameOf('steady-eth')) !== 'Steady ETH, renamed') {
      if (Date.now() > deadline) throw new Error('the published catalogue never reached the live projection');
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  it('refuses an environment naming another topic, in one line naming the live one; nothing published', async () => {
    const before = await high(catalogueTopic);
    const path = join(dir, 'catalogue-2.json');
    writeFileSync(path, JSON.stringify(makeCatalogue(6_000)));
    const res = await runCli(['publish', 'catalogue', path], {
      ...env,
      CATALOGUE_TOPIC: 'strategy-catalogue',
    });
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toContain(
      `CATALOGUE_TOPIC=strategy-catalogue, but the live projection ${db.schema} reads ${catalogueTopic}`,
    );
    expect(res.stdout).toBe('');
    expect(await high(catalogueTopic)).toBe(before);
  });
});
