import { randomBytes } from 'node:crypto';
import { createLogAdmin } from '@vault-yield/log';
import { kafkaBrokers } from '@vault-yield/test-kit';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run.js';
import { parseCurl, readmePath, sendRpc, walkOperatorPath } from './readme-path.js';
import { dropDevDatabases, startDev, waitExit } from './support.js';

/**
 * The README's *Operators* path, run as written against `npm start` (#48 "what done looks like"):
 * the lines between `operator-path:begin` and `:end` in README.md, in their order, with the
 * environment `npm start` prints on its `operators:` line and nothing else — while two clients
 * read every vault, `/v1/vaults` and `/ready` throughout (test/dev/readme-path.ts, which the
 * compose replay in test/deploy/image.test.ts walks too). After each command: it exited 0 in one
 * piece of output (no stack trace); a switch left every snapshot as it was (the chain is quiet:
 * `--no-live`); a deposit sent as the `deposit:` line says reaches the API; and in the end not
 * one read failed, `verify` found no difference and left no scratch schema, `retire` advised
 * dropping nothing in use, and the published catalogue entry is served.
 *
 * The one liberty: the demo's topics carry this test's own prefix (DEV_KAFKA_PREFIX), so a
 * README line's `dev-` topic is the same topic under that prefix.
 */

/** `NAME=value …` of the `operators:` line `npm start` printed. */
function operatorsLine(out: string): Record<string, string> {
  const m = /^operators: export (.+)$/m.exec(out);
  if (!m?.[1]) throw new Error(`npm start printed no operators: line:\n${out.slice(-3000)}`);
  return Object.fromEntries(
    m[1].split(' ').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

/** The `deposit:` line's curl. */
function depositLine(out: string): { body: string; rpcUrl: string } {
  const m = /^deposit:\s+(curl .+)$/m.exec(out);
  if (!m?.[1]) throw new Error(`npm start printed no deposit: line:\n${out.slice(-3000)}`);
  return parseCurl(m[1]);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the README's operator path on npm start", () => {
  const prefix = `op${randomBytes(3).toString('hex')}`;
  const topics: string[] = [];
  afterAll(async () => {
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'operator-path-test' });
    for (const t of topics) await admin.deleteTopic(t).catch(() => {});
    await admin.close();
    await dropDevDatabases();
  });

  it('rebuild ×2, verify, reindex, verify, status, retire, publish: no read fails, nothing moves, new activity is served', async () => {
    // Every client of this test reads from one address: the per-client limits are off, so a 429
    // (by design under load from one address) is never taken for a failure of a switch.
    // One chain: the README's operator commands name one RPC_URL, and `reindex` cuts the log of
    // that chain (a second chain's vaults would leave the reindexed log, and the reads with it).
    const dev = startDev(undefined, ['--no-live', '--one-chain'], {
      DEV_KAFKA_PREFIX: prefix,
      RATE_LIMIT_RPS: '0',
      CLIENT_CONCURRENCY: '0',
    });
    try {
      const url = await dev.ready;
      for (let i = 0; !/^operators: /m.test(dev.out()); i++) {
        if (i > 100) throw new Error('no operators: line');
        await sleep(100);
      }
      const env = operatorsLine(dev.out());
      const deposit = depositLine(dev.out());
      const path = await readmePath();
      // The README's environment is the line npm start prints: the same variables, no other.
      expect(Object.keys(env).sort()).toEqual([...path.exported].sort());
      topics.push(`${prefix}-vault-records`, `${prefix}-screen-results`, `${prefix}-strategy-catalogue`);

      await walkOperatorPath(
        {
          url,
          migrateDatabaseUrl: env.MIGRATE_DATABASE_URL!,
          cli: (args, cwd) => runCli(args, { ...env, LOG_FORMAT: 'json' }, 300_000, cwd),
          name: (a) => a.replace(/^dev-/, `${prefix}-`),
          deposit: () => sendRpc(deposit.rpcUrl, deposit.body),
          depositVault: JSON.parse(deposit.body).params[0].to as string,
          onTopic: (t) => topics.push(t),
        },
        path,
      );
    } finally {
      dev.child.kill('SIGINT');
      await waitExit(dev, 60_000);
    }
  }, 900_000);
});
