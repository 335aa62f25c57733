import { randomBytes } from 'node:crypto';
import { createPgPool, createWebhookStore, type Pool } from '@vault-yield/store';
import type { TestDatabase } from '@vault-yield/test-kit';
import { insertLedger, type LedgerSpec, randomAddress } from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Behaviour,
  type Receiver,
  type RunningDeliverer,
  rowOf,
  startDeliverer,
  startReceiver,
} from '../webhooks/support.js';
import { freePortPair, type OwnPostgres, startOwnPostgres, until } from './support.js';

/**
 * The webhook deliverer (the webhooks service ×2, a deliverer and its standby, as compose
 * runs them) with its database failing under it, on a Postgres cluster of this file's own (never
 * the machine's) and receivers on loopback. Every row must reach every endpoint, in order per
 * vault (at least once: the first answered delivery of each webhook-id counts), none left pending,
 * and never two deliverers sending at once.
 */
describe('webhook deliverer with its database failing', () => {
  let pg: OwnPostgres;
  const pools: Pool[] = [];
  const receivers: Receiver[] = [];
  const deliverers: RunningDeliverer[] = [];
  beforeAll(async () => {
    pg = await startOwnPostgres();
  });
  afterAll(async () => {
    for (const d of deliverers) if (d.child.exitCode === null) d.child.kill('SIGKILL');
    for (const r of receivers) await r.close().catch(() => {});
    for (const p of pools) await p.end().catch(() => {});
    await pg?.destroy();
  });

  /** A database with `endpoints` receivers (answering as `behave`) added, and `vaults` vaults' rows to write. */
  async function setUp(label: string, endpoints: number, vaults: number, behave: Behaviour) {
    const db: TestDatabase = await pg.database(label);
    const pool = createPgPool({
      url: db.writerUrl,
      schema: db.schema,
      applicationName: `${label}-test`,
      max: 2,
    });
    pools.push(pool);
    const store = createWebhookStore(pool, db.schema);
    const mine: Receiver[] = [];
    for (let i = 0; i < endpoints; i++) {
      const r = await startReceiver(behave);
      receivers.push(r);
      mine.push(r);
      await store.addEndpoint({
        url: r.url,
        secret: `whsec_${randomBytes(32).toString('base64')}`,
        vaults: null,
        types: null,
        ledgerSchema: db.schema,
      });
    }
    const addresses = Array.from({ length: vaults }, randomAddress);
    const types = ['deposit', 'withdrawal', 'fee.charged'] as const;
    /** `count` rows a vault, one a block from `from`; returns them as `vault:block`. */
    const write = async (from: number, count: number): Promise<string[]> => {
      const specs: LedgerSpec[] = Array.from({ length: count }, (_, i) =>
        addresses.map((vault) => ({
          vault,
          type: types[(from + i) % types.length] ?? 'deposit',
          blockNumber: from + i,
        })),
      ).flat();
      for (let i = 0; i < specs.length; i += 200) await insertLedger(pool, specs.slice(i, i + 200));
      return specs.map((s) => `${s.vault}:${s.blockNumber}`);
    };
    return { db, pool, receivers: mine, write };
  }

  /** `count` deliverers on `db` (fast polls and retries), each with its metrics server. */
  async function startDeliverers(db: TestDatabase, count: number, env: Record<string, string> = {}) {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) ports.push(await freePortPair());
    const procs = ports.map((port) =>
      startDeliverer({
        DATABASE_URL: db.writerUrl,
        PROJECTION_SCHEMA: db.schema,
        VIEWS_SCHEMA: 'webhooks_failover_no_views',
        WEBHOOK_POLL_INTERVAL_MS: '50',
        WEBHOOK_BACKOFF_BASE_MS: '50',
        WEBHOOK_BACKOFF_MAX_MS: '300',
        WEBHOOK_CONCURRENCY: '48',
        // One receiver: every slot may go to it (the per-endpoint cap is tested in limits.test.ts).
        WEBHOOK_ENDPOINT_CONCURRENCY: '48',
        METRICS_PORT: String(port),
        ...env,
      }),
    );
    deliverers.push(...procs);
    const alive = () => {
      for (const d of procs)
        if (d.child.exitCode !== null)
          throw new Error(`a deliverer exited (${d.child.exitCode}):\n${d.logs.slice(-20).join('\n')}`);
    };
    const get = async (port: number, path: string): Promise<{ status: number; body: string }> => {
      try {
        const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2_000) });
        return { status: res.status, body: await res.text() };
      } catch {
        return { status: 0, body: '' };
      }
    };
    const health = () => Promise.all(ports.map(async (p) => (await get(p, '/health')).status));
    const metrics = () => Promise.all(ports.map(async (p) => (await get(p, '/metrics')).body));
    const active = async () => (await metrics()).map((m) => /^webhooks_deliverer_active 1$/m.test(m));
    const stop = async () => {
      for (const d of procs) d.child.kill('SIGTERM');
      for (const d of procs) expect(await d.exited).toBe(0);
    };
    return { ports, alive, get, health, metrics, active, stop };
  }

  /** An endpoint's rows answered 200, first time each, as `vault:block` in answer order. */
  function answered(r: Receiver): string[] {
    const seen = new Set<string>();
    const out: string[] = [];
    for (const x of r.received) {
      if (x.status !== 200 || seen.has(x.id)) continue;
      seen.add(x.id);
      const row = rowOf(x);
      out.push(`${row.vault}:${row.blockNumber}`);
    }
    return out;
  }

  /** Every endpoint got every expected row, each vault's in block order; nothing left pending. */
  async function expectAllDelivered(pool: Pool, mine: readonly Receiver[], expected: ReadonlySet<string>) {
    for (const r of mine) {
      const got = answered(r);
      expect(new Set(got)).toEqual(expected);
      const byVault = new Map<string, number[]>();
      for (const key of got) {
        const [vault, block] = key.split(':') as [string, string];
        byVault.set(vault, [...(byVault.get(vault) ?? []), Number(block)]);
      }
      for (const [vault, blocks] of byVault)
        expect(blocks, `vault ${vault} in order`).toEqual([...blocks].sort((a, b) => a - b));
    }
    // The last answers' outcomes are recorded a round later: polled, never stuck.
    let left: { state: string; n: number }[] = [];
    await until(
      async () => {
        ({ rows: left } = await pool.query<{ state: string; n: number }>(
          `select state, count(*)::int as n from webhook_deliveries where state <> 'delivered' group by state`,
        ));
        return left.length === 0;
      },
      'no delivery left pending or parked',
      30_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${JSON.stringify(left)}`);
    });
  }

  async function untilAllAnswered(mine: readonly Receiver[], size: number, alive: () => void, ms = 120_000) {
    await until(
      () => {
        alive();
        return mine.every((r) => answered(r).length >= size);
      },
      'every row at every endpoint',
      ms,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${mine.map((r) => answered(r).length).join(', ')} of ${size} each`);
    });
  }

  /**
   * Postgres stopped `-m immediate` (sessions cut, a crash) and started again three times
   * mid-delivery, 4 endpoints × 48 vaults. Each deliverer's `/health` answers 503 while it is
   * down and 200 once it is back. (Before: outcomes not recorded in a failed round were dropped
   * with their (endpoint, vault) pairs still marked in flight — those vaults were never sent
   * again, and with 16 such pairs nothing was; `/health` said 200 throughout; the standby exited
   * on its first failed lock attempt.)
   */
  it('Postgres restarts: every row to every endpoint, in order per vault, none stuck; health follows the database', async () => {
    const slow: Behaviour = () => new Promise((resolve) => setTimeout(() => resolve(200), 15));
    const { db, pool, receivers: mine, write } = await setUp('webhooks_failover', 4, 48, slow);
    const first = await write(1, 20);
    const d = await startDeliverers(db, 2);

    // Never two deliverers at once: sampled all along.
    let both = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        if ((await d.active()).every(Boolean)) both++;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const delivered = () => mine.reduce((n, r) => n + answered(r).length, 0);
    const healthIs = (status: number, what: string) =>
      until(async () => {
        d.alive();
        return (await d.health()).every((s) => s === status);
      }, what);

    await healthIs(200, 'both deliverers healthy');
    const total = first.length * mine.length;
    for (let i = 0; i < 3; i++) {
      const at = Math.floor((total * (i + 1)) / 5);
      await until(() => {
        d.alive();
        return delivered() >= at;
      }, `${at} deliveries`);
      expect(delivered(), 'Postgres stops mid-delivery').toBeLessThan(total);
      await pg.stop();
      await healthIs(503, `both deliverers unhealthy with Postgres down (restart ${i + 1})`);
      expect((await d.get(d.ports[0] as number, '/health')).body).toMatch(/"reason":"database error: /);
      await pg.start();
      await healthIs(200, `both deliverers healthy again (restart ${i + 1})`);
    }

    // Rows written after the restarts are delivered too.
    const expected = new Set([...first, ...(await write(21, 8))]);
    await untilAllAnswered(mine, expected.size, d.alive);
    sampling = false;
    await sampler;
    await expectAllDelivered(pool, mine, expected);
    await until(
      async () => (await d.metrics()).every((m) => /^webhooks_deliveries_in_flight 0$/m.test(m)),
      'nothing in flight',
    );
    expect((await d.active()).filter(Boolean)).toHaveLength(1);
    expect(both).toBe(0);
    await d.stop();
  }, 300_000);

  /**
   * The lock holder's session is killed (`pg_terminate_backend`) while Postgres stays up, three
   * times: the standby may take the lock at once, so the deliverer that lost it must stop sending
   * before its next round. A receiver that sees two requests of one vault overlap sees two
   * deliverers (one sends a vault's deliveries one after the other); only a request already in
   * flight when the session died may overlap, within a moment of it. (Before: the deliverer never
   * noticed, and both sent side by side until the end.)
   */
  it('lock session killed: the deliverer stops sending and takes the lock again; never two at once', async () => {
    const open = new Map<string, number>();
    const overlaps: number[] = [];
    // Answers after 30 ms; notes when a request comes while another of its vault is open.
    const watch: Behaviour = async (_req, body) => {
      const vault = (JSON.parse(body) as { data: { vault: string } }).data.vault;
      const n = open.get(vault) ?? 0;
      if (n > 0) overlaps.push(Date.now());
      open.set(vault, n + 1);
      await new Promise((r) => setTimeout(r, 30));
      open.set(vault, (open.get(vault) ?? 1) - 1);
      return 200;
    };
    const { db, pool, receivers: mine, write } = await setUp('webhooks_lock', 1, 40, watch);
    const expected = new Set(await write(1, 40));
    const d = await startDeliverers(db, 2);
    const admin = createPgPool({ url: pg.adminUrl, applicationName: 'webhooks-lock-test-admin', max: 1 });
    pools.push(admin);
    const holder = async () => {
      const { rows } = await admin.query<{ pid: number }>(
        `select l.pid from pg_locks l join pg_stat_activity a on a.pid = l.pid
          where l.locktype = 'advisory' and l.granted and a.datname = $1`,
        [db.database],
      );
      return rows.map((r) => r.pid);
    };
    const kills: number[] = [];
    for (let i = 0; i < 3; i++) {
      const at = Math.floor((expected.size * (i + 1)) / 6);
      await until(async () => {
        d.alive();
        return answered(mine[0] as Receiver).length >= at && (await holder()).length === 1;
      }, `${at} deliveries and a lock holder`);
      const [pid] = await holder();
      kills.push(Date.now());
      await admin.query('select pg_terminate_backend($1)', [pid]);
    }
    await untilAllAnswered(mine, expected.size, d.alive);
    await expectAllDelivered(pool, mine, expected);
    // Overlaps only from sends in flight when a session died (answered within 30 ms of it).
    const late = overlaps.filter((t) => !kills.some((k) => t >= k && t - k < 1_000));
    expect(late.length, 'requests of one vault overlapping later: two deliverers sending').toBe(0);
    expect(await holder()).toHaveLength(1);
    expect((await d.active()).filter(Boolean)).toHaveLength(1);
    await d.stop();
  }, 300_000);

  /**
   * A statement that cannot finish (its table locked by another session) is cancelled at
   * WEBHOOK_STATEMENT_TIMEOUT_MS: the round fails, `/health` answers 503 with the reason while it
   * lasts, and once the lock goes every row is delivered. (Before: no statement timeout — the
   * round waited as long as the lock was held, `/health` said 200 throughout.)
   */
  it('a statement past the statement timeout: health 503 with the reason while it lasts, every row after', async () => {
    const { db, pool, receivers: mine, write } = await setUp('webhooks_stall', 1, 8, () => 200);
    const first = await write(1, 5);
    const d = await startDeliverers(db, 1, { WEBHOOK_STATEMENT_TIMEOUT_MS: '1000' });
    await untilAllAnswered(mine, first.length, d.alive);
    const blocker = await pool.connect();
    try {
      await blocker.query('begin');
      await blocker.query('lock table webhook_deliveries in access exclusive mode');
      const later = await write(6, 5);
      await until(
        async () => {
          d.alive();
          return (await d.health()).every((s) => s === 503);
        },
        'health 503 while the deliverer cannot finish a statement',
        30_000,
      );
      expect((await d.get(d.ports[0] as number, '/health')).body).toMatch(/"reason":"database error: 57014/);
      expect(answered(mine[0] as Receiver)).toHaveLength(first.length);
      await blocker.query('commit');
      const expected = new Set([...first, ...later]);
      await untilAllAnswered(mine, expected.size, d.alive);
      await expectAllDelivered(pool, mine, expected);
      await until(async () => (await d.health()).every((s) => s === 200), 'health 200 again');
    } finally {
      await blocker.query('rollback').catch(() => {});
      blocker.release();
    }
    await d.stop();
  }, 120_000);

  /**
   * The deliverer's idle connections frozen (SIGSTOP to their backends: a server that answers
   * nothing, as behind a host gone without closing its connections) while Postgres takes new
   * ones: a query on them fails client-side 2 s past WEBHOOK_STATEMENT_TIMEOUT_MS, the connection
   * is dropped, and the rows go out on new ones while the old stay frozen. (Before: the round waited
   * on the frozen connection for ever — a statement timeout needs the server to act.)
   */
  it('connections that answer nothing: dropped past the time-out, delivery goes on', async () => {
    const { db, pool, receivers: mine, write } = await setUp('webhooks_frozen', 1, 8, () => 200);
    const first = await write(1, 5);
    const d = await startDeliverers(db, 1, { WEBHOOK_STATEMENT_TIMEOUT_MS: '1000' });
    await untilAllAnswered(mine, first.length, d.alive);
    const admin = createPgPool({ url: pg.adminUrl, applicationName: 'webhooks-frozen-test-admin', max: 1 });
    pools.push(admin);
    // The deliverer's idle sessions (outside any transaction: they hold no row lock), not the
    // lock holder's (a frozen holder keeps the lock: the deliverer would rightly stand by).
    const idle = async () => {
      const { rows } = await admin.query<{ pid: number }>(
        `select a.pid from pg_stat_activity a
          where a.datname = $1 and a.application_name = 'vault-yield-webhooks' and a.state = 'idle'
            and not exists (select 1 from pg_locks l where l.pid = a.pid and l.locktype = 'advisory')`,
        [db.database],
      );
      return rows.map((r) => r.pid);
    };
    const frozen: number[] = [];
    try {
      // Frozen while idle: a session that went busy just before its SIGSTOP is let go and tried again.
      await until(async () => {
        for (const pid of frozen.splice(0)) process.kill(pid, 'SIGCONT');
        const pids = await idle();
        for (const pid of pids) process.kill(pid, 'SIGSTOP');
        frozen.push(...pids);
        const still = new Set(await idle());
        return pids.length > 0 && pids.every((p) => still.has(p));
      }, 'idle sessions of the deliverer frozen');
      const later = await write(6, 5);
      const expected = new Set([...first, ...later]);
      await untilAllAnswered(mine, expected.size, d.alive, 30_000);
      await expectAllDelivered(pool, mine, expected);
    } finally {
      for (const pid of frozen) process.kill(pid, 'SIGCONT');
    }
    await d.stop();
  }, 120_000);
});
