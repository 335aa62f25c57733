import { ROLES } from '@vault-yield/devstack/postgres';
import { createPgPool, migrate, type Pool, switchLive } from '@vault-yield/store';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import {
  insertLedger,
  type LedgerSpec,
  randomAddress,
  type Writer,
  writer,
} from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run.js';
import { type Receiver, rowOf, startDeliverer, startReceiver, TEST_WEBHOOK_KEY, waitFor } from './support.js';

/**
 * Callbacks across a rebuild's switch, on a real Postgres with the deliverer as its own process:
 * the rebuilt ledger holds the vaults' whole history again (written by the build), and the
 * deliverer moves its cursor to it. A receiver gets every row that entered the ledger after its
 * endpoint was added exactly once — the rows before the switch, the rows after it — and none of
 * the history from before the endpoint, also for a vault that had no row since (it once got that
 * vault's whole history again after every rebuild).
 */
const VIEWS = 'webhooks_switch_api';
const BUILD = 'vault_yield_build';

describe('webhooks across a rebuild switch', () => {
  let db: TestDatabase;
  let migrator: Pool;
  let live: Writer;
  let build: Writer;
  let receiver: Receiver | undefined;

  beforeAll(async () => {
    db = await createTestDatabase('webhooks_switch', { split: true });
    migrator = createPgPool({ url: db.migratorUrl, applicationName: 'webhooks-switch-test', max: 1 });
    await switchLive(migrator, {
      viewsSchema: VIEWS,
      target: db.schema,
      readerRole: ROLES.reader,
      writerRole: ROLES.writer,
    });
    await migrate(migrator, BUILD, ROLES.reader, { writerRole: ROLES.writer });
    live = writer(db.writerUrl, db.schema);
    build = writer(db.writerUrl, BUILD);
  });

  afterAll(async () => {
    await receiver?.close();
    await live?.end();
    await build?.end();
    await migrator?.end();
    await db?.drop();
  });

  const env: () => Record<string, string> = () => ({
    DATABASE_URL: db.webhooksUrl,
    WEBHOOK_SECRET_KEY: TEST_WEBHOOK_KEY,
    PROJECTION_SCHEMA: db.schema,
    VIEWS_SCHEMA: VIEWS,
    WEBHOOK_POLL_INTERVAL_MS: '50',
    // The receiver is on 127.0.0.1: inside the network, refused unless allowed.
    WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8',
  });
  /** `count` deposits of `vault` from `block` on, with fixed tx hashes (the build writes the same rows). */
  let tx = 0;
  const rows = (vault: string, block: number, count: number): (LedgerSpec & { txHash: string })[] =>
    Array.from({ length: count }, (_, i) => ({
      vault,
      type: 'deposit' as const,
      blockNumber: block + i,
      txHash: `0x${(++tx).toString(16).padStart(64, '0')}`,
    }));
  const key = (x: { vault: string; txHash: string }) => `${x.vault}:${x.txHash}`;

  it('delivers what entered the ledger after the endpoint, once, before and after the switch; no history', async () => {
    const busy = randomAddress();
    const quiet = randomAddress();
    // History from before the endpoint: never to be delivered.
    const history = [...rows(busy, 10, 5), ...rows(quiet, 10, 5)];
    await insertLedger(live, history);

    receiver = await startReceiver();
    const added = await runCli(['webhooks', 'add', receiver.url, '--all', '--json'], env());
    expect(added.code, added.stderr).toBe(0);
    const endpoint = JSON.parse(added.stdout) as { id: number };
    const run = startDeliverer(env());
    await run.ready;
    try {
      // Before the switch: the busy vault moves, the quiet one does not.
      const before = rows(busy, 100, 4);
      await insertLedger(live, before);
      const delivered = () =>
        new Set(receiver!.received.filter((r) => r.status === 200).map((r) => key(rowOf(r))));
      await waitFor('the rows before the switch', () => before.every((r) => delivered().has(key(r))));

      // The build: the same ledger again, written by its own transactions, then the switch.
      await insertLedger(build, [...history, ...before]);
      await switchLive(migrator, {
        viewsSchema: VIEWS,
        target: BUILD,
        readerRole: ROLES.reader,
        writerRole: ROLES.writer,
      });
      // After it: both vaults move, in the new ledger.
      const after = [...rows(busy, 200, 3), ...rows(quiet, 200, 3)];
      await insertLedger(build, after);
      await waitFor('the rows after the switch', () => after.every((r) => delivered().has(key(r))));
      await waitFor('the deliverer to move to the new ledger and finish its rescan', () =>
        run.logs.some((l) => l.includes('live schema changed')),
      );
      // The rescan is done once the endpoint has no rescan mark left: nothing more can come.
      const check = createPgPool({ url: db.webhooksUrl, applicationName: 'webhooks-switch-check', max: 1 });
      try {
        await waitFor('the rescan to end', async () => {
          const { rows: r } = await check.query<{ done: boolean }>(
            `select rescan_below is null and ledger_schema = $2 as done from ${db.schema}.webhook_endpoints where id = $1`,
            [endpoint.id, BUILD],
          );
          return r[0]?.done === true;
        });
        await waitFor('no delivery pending', async () => {
          const { rows: r } = await check.query<{ n: number }>(
            `select count(*)::int as n from ${db.schema}.webhook_deliveries where endpoint_id = $1 and state <> 'delivered'`,
            [endpoint.id],
          );
          return r[0]?.n === 0;
        });
      } finally {
        await check.end();
      }
      const got = receiver.received.filter((r) => r.status === 200).map((r) => key(rowOf(r)));
      // Exactly the rows after the endpoint was added, each once: none of the history (the
      // quiet vault's included), none of the build's copies of rows already delivered.
      expect(got.sort()).toEqual([...before, ...after].map((r) => key(r)).sort());
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
  }, 120_000);
});
