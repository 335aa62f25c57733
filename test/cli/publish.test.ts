import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogAdmin } from '@vault-yield/log';
import { kafkaBrokers, uniqueTopic } from '@vault-yield/test-kit';
import { makeCatalogue, makeScreen } from '@vault-yield/test-kit/screen';
import { afterAll, describe, expect, it } from 'vitest';
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
