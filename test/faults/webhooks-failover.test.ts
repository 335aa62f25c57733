import { randomBytes } from 'node:crypto';
import { createPgPool, createWebhookStore, type Pool } from '@vault-yield/store';
import type { TestDatabase } from '@vault-yield/test-kit';
import { insertLedger, type LedgerSpec, randomAddress } from '@vault-yield/test-kit/reader';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type Receiver,
  type RunningDeliverer,
  rowOf,
  startDeliverer,
  startReceiver,
} from '../webhooks/support.js';
import { freePortPair, type OwnPostgres, startOwnPostgres, until } from './support.js';

const ENDPOINTS = 4;
const VAULTS = 48;
const FIRST = 20;
const LATER = 8;
const RESTARTS = 3;

/**
 * Postgres stopped `-m immediate` (sessions cut, a crash) and started again, a few times, under a
 * running deliverer and its standby (`vault-yield webhooks run` ×2, as compose runs them), with
 * four receivers on loopback and many vaults' ledger rows in flight. A Postgres cluster of this
 * test's own, never the machine's. Every row must reach every endpoint, in order per vault (at
 * least once: a first answered delivery of each webhook-id), none stuck pending; each deliverer's
 * `/health` answers 503 while the database is away and 200 once it is back; never two deliverers
 * deliver at once. (Before: outcomes not recorded in a failed round were dropped with their
 * (endpoint, vault) pairs still marked in flight, so those vaults were never sent again.)
 */
describe('webhook deliverer across Postgres restarts', () => {
  let pg: OwnPostgres | undefined;
  let pool: Pool | undefined;
  const receivers: Receiver[] = [];
  const deliverers: RunningDeliverer[] = [];
  afterAll(async () => {
    for (const d of deliverers) if (d.child.exitCode === null) d.child.kill('SIGKILL');
    for (const r of receivers) await r.close().catch(() => {});
    await pool?.end().catch(() => {});
    await pg?.destroy();
  });

  it('delivers every row to every endpoint, in order per vault, none stuck; health follows the database', async () => {
    pg = await startOwnPostgres();
    const db: TestDatabase = await pg.database('webhooks_failover');
    pool = createPgPool({
      url: db.writerUrl,
      schema: db.schema,
      applicationName: 'webhooks-failover-test',
      max: 2,
    });
    const store = createWebhookStore(pool, db.schema);
    for (let i = 0; i < ENDPOINTS; i++) {
      // A receiver a little slow to answer: many deliveries are in flight when Postgres stops.
      const r = await startReceiver(() => new Promise((resolve) => setTimeout(() => resolve(200), 15)));
      receivers.push(r);
      await store.addEndpoint({
        url: r.url,
        secret: `whsec_${randomBytes(32).toString('base64')}`,
        vaults: null,
        types: null,
        ledgerSchema: db.schema,
      });
    }
    const vaults = Array.from({ length: VAULTS }, randomAddress);
    const types = ['deposit', 'withdrawal', 'fee.charged'] as const;
    const rows = (from: number, count: number): LedgerSpec[] =>
      Array.from({ length: count }, (_, i) =>
        vaults.map((vault) => ({
          vault,
          type: types[(from + i) % types.length] ?? 'deposit',
          blockNumber: from + i,
        })),
      ).flat();
    const first = rows(1, FIRST);
    for (let i = 0; i < first.length; i += 200) await insertLedger(pool, first.slice(i, i + 200));

    const ports = [await freePortPair(), await freePortPair()];
    for (const port of ports)
      deliverers.push(
        startDeliverer({
          DATABASE_URL: db.writerUrl,
          PROJECTION_SCHEMA: db.schema,
          VIEWS_SCHEMA: 'webhooks_failover_no_views',
          WEBHOOK_POLL_INTERVAL_MS: '50',
          WEBHOOK_BACKOFF_BASE_MS: '50',
          WEBHOOK_BACKOFF_MAX_MS: '300',
          WEBHOOK_CONCURRENCY: '48',
          METRICS_PORT: String(port),
        }),
      );
    const alive = () => {
      for (const d of deliverers)
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
    const health = async () => Promise.all(ports.map(async (p) => (await get(p, '/health')).status));
    const active = async () =>
      Promise.all(
        ports.map(async (p) => /^webhooks_deliverer_active 1$/m.test((await get(p, '/metrics')).body)),
      );

    // Never two deliverers at once: sampled all along.
    let both = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        if ((await active()).every(Boolean)) both++;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    /** Each endpoint's rows answered 200, first time each, as `vault:block` in answer order. */
    const answered = (r: Receiver): string[] => {
      const seen = new Set<string>();
      const out: string[] = [];
      for (const x of r.received) {
        if (x.status !== 200 || seen.has(x.id)) continue;
        seen.add(x.id);
        const row = rowOf(x);
        out.push(`${row.vault}:${row.blockNumber}`);
      }
      return out;
    };
    const delivered = () => receivers.reduce((n, r) => n + answered(r).length, 0);

    await until(async () => {
      alive();
      return (await health()).every((s) => s === 200);
    }, 'both deliverers healthy');
    const total = first.length * ENDPOINTS;
    for (let i = 0; i < RESTARTS; i++) {
      const at = Math.floor((total * (i + 1)) / (RESTARTS + 2));
      await until(() => {
        alive();
        return delivered() >= at;
      }, `${at} deliveries`);
      expect(delivered(), 'Postgres stops mid-delivery').toBeLessThan(total);
      await pg.stop();
      await until(
        async () => {
          alive();
          return (await health()).every((s) => s === 503);
        },
        `both deliverers unhealthy with Postgres down (restart ${i + 1})`,
      );
      const reason = await get(ports[0] as number, '/health');
      expect(reason.body).toMatch(/"reason"/);
      await pg.start();
      await until(
        async () => {
          alive();
          return (await health()).every((s) => s === 200);
        },
        `both deliverers healthy again (restart ${i + 1})`,
      );
    }

    // Rows written after the restarts are delivered too.
    const later = rows(FIRST + 1, LATER);
    for (let i = 0; i < later.length; i += 200) await insertLedger(pool, later.slice(i, i + 200));
    const expected = new Set([...first, ...later].map((s) => `${s.vault}:${s.blockNumber}`));
    await until(() => {
      alive();
      return receivers.every((r) => answered(r).length >= expected.size);
    }, 'every row at every endpoint').catch((err: Error) => {
      const got = receivers.map((r) => answered(r).length).join(', ');
      throw new Error(`${err.message}: ${got} of ${expected.size} each`);
    });

    sampling = false;
    await sampler;
    for (const r of receivers) {
      const got = answered(r);
      expect(new Set(got)).toEqual(expected);
      // In order per vault: each vault's blocks ascending in the order first answered.
      const byVault = new Map<string, number[]>();
      for (const key of got) {
        const [vault, block] = key.split(':') as [string, string];
        byVault.set(vault, [...(byVault.get(vault) ?? []), Number(block)]);
      }
      for (const [vault, blocks] of byVault)
        expect(blocks, `vault ${vault} in order`).toEqual([...blocks].sort((a, b) => a - b));
    }
    // None stuck: nothing pending or parked, nothing in flight, one deliverer active.
    const { rows: left } = await pool.query<{ state: string; n: number }>(
      `select state, count(*)::int as n from webhook_deliveries where state <> 'delivered' group by state`,
    );
    expect(left).toEqual([]);
    await until(async () => {
      const metrics = await Promise.all(ports.map(async (p) => (await get(p, '/metrics')).body));
      return metrics.every((m) => /^webhooks_deliveries_in_flight 0$/m.test(m));
    }, 'nothing in flight');
    expect((await active()).filter(Boolean)).toHaveLength(1);
    expect(both).toBe(0);
    for (const d of deliverers) d.child.kill('SIGTERM');
    for (const d of deliverers) expect(await d.exited).toBe(0);
  }, 300_000);
});
