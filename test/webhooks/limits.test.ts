import { randomBytes } from 'node:crypto';
import { createLogger } from '@vault-yield/common';
import {
  createPgPool,
  createWebhookStore,
  type Pool,
  type WebhookStore,
  webhookSecretKeys,
} from '@vault-yield/store';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { insertLedger, randomAddress, type Writer, writer } from '@vault-yield/test-kit/reader';
import {
  createWebhookDeliverer,
  type ResolvedAddress,
  type WebhookDeliverer,
  type WebhookDelivererConfig,
} from '@vault-yield/webhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run.js';
import { type Receiver, startReceiver, waitFor } from './support.js';

/**
 * Callbacks exposed to the internet (#42 items 6 and 5): where a delivery may go (SSRF: `add`
 * refuses forbidden hosts in every spelling, the deliverer checks every address a name resolves to
 * and connects to the checked one) and how far one endpoint may weigh on the rest (per-endpoint
 * cap, circuit breaker, 410 Gone, parked rows' retention). Real Postgres, real receivers on
 * loopback, the deliverer in this process (its resolver injected where a test needs names).
 */
let db: TestDatabase;
let w: Writer;
let pool: Pool;
let store: WebhookStore;
const key = randomBytes(32).toString('base64');
const keys = webhookSecretKeys(key);
const receivers: Receiver[] = [];
const deliverers: WebhookDeliverer[] = [];

beforeAll(async () => {
  db = await createTestDatabase('webhook_limits', { split: true });
  w = writer(db.writerUrl, db.schema);
  pool = createPgPool({ url: db.webhooksUrl, applicationName: 'webhook-limits-test', max: 2 });
  store = createWebhookStore(pool, db.schema, keys);
});

afterEach(async () => {
  for (const d of deliverers.splice(0)) await d.stop();
  for (const r of receivers.splice(0)) await r.close().catch(() => {});
  // Each test starts with no endpoint (their deliveries go with them).
  for (const e of await store.listEndpoints()) await store.removeEndpoint(e.id);
});

afterAll(async () => {
  await w?.end();
  await pool?.end();
  await db?.drop();
});

const logger = createLogger({
  name: 'webhooks-limits-test',
  level: process.env.LIMITS_LOG === '1' ? 'debug' : 'silent',
  format: 'json',
});

/** A deliverer on the test database (fast polls and retries); `config` overrides. */
async function deliverer(config: Partial<WebhookDelivererConfig> = {}): Promise<WebhookDeliverer> {
  const d = createWebhookDeliverer({
    databaseUrl: db.webhooksUrl,
    schema: db.schema,
    projectionSchema: db.schema,
    viewsSchema: 'webhook_limits_no_views',
    secretKeys: keys,
    pollIntervalMs: 50,
    backoffBaseMs: 20,
    backoffMaxMs: 100,
    logger,
    ...config,
  });
  deliverers.push(d);
  await d.start();
  return d;
}

async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

async function endpoint(url: string): Promise<number> {
  const e = await store.addEndpoint({
    url,
    secret: `whsec_${randomBytes(32).toString('base64')}`,
    vaults: null,
    types: null,
    ledgerSchema: db.schema,
  });
  return e.id;
}

let block = 1_000;
/** One row for each of `count` new vaults; returns the vaults. */
async function rows(count: number): Promise<string[]> {
  const vaults = Array.from({ length: count }, randomAddress);
  block++;
  await insertLedger(
    w,
    vaults.map((vault) => ({ vault, type: 'deposit' as const, blockNumber: block })),
  );
  return vaults;
}

async function states(endpointId: number): Promise<{ state: string; error: string | null }[]> {
  const { rows: r } = await pool.query<{ state: string; last_error: string | null }>(
    `select state, last_error from ${db.schema}.webhook_deliveries where endpoint_id = $1 order by id`,
    [endpointId],
  );
  return r.map((x) => ({ state: x.state, error: x.last_error }));
}

const cliEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  DATABASE_URL: db.webhooksUrl,
  PROJECTION_SCHEMA: db.schema,
  VIEWS_SCHEMA: 'webhook_limits_no_views',
  WEBHOOK_SECRET_KEY: key,
  ...extra,
});

describe('where a callback may go (SSRF)', () => {
  // Every spelling is covered by services/webhooks/src/address.test.ts; here the CLI's answer.
  it.each([
    ['http://2130706433/hook', 'loopback'],
    ['http://0177.0.0.1/hook', 'loopback'],
    ['http://[::ffff:127.0.0.1]/', 'loopback address (in IPv6 form)'],
    ['http://169.254.169.254/latest/meta-data/', 'link-local'],
    ['https://user:pass@hooks.example.com/in', 'credentials'],
  ])('add refuses %s (%s) in one line, exit 2', async (url, why) => {
    const r = await runCli(['webhooks', 'add', url, '--all'], cliEnv());
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('refused');
    expect(r.stderr).toContain(why);
    expect(r.stderr).not.toContain('pass');
  });

  it('add takes a public address, and a private one when WEBHOOK_ALLOW_NETWORKS allows its network', async () => {
    const ok = await runCli(['webhooks', 'add', 'https://hooks.example.com/in', '--all'], cliEnv());
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    const allowed = await runCli(
      ['webhooks', 'add', 'http://10.1.2.3/in', '--all'],
      cliEnv({ WEBHOOK_ALLOW_NETWORKS: '10.0.0.0/8' }),
    );
    expect(allowed.code).toBe(0);
    const bad = await runCli(['webhooks', 'list'], cliEnv({ WEBHOOK_ALLOW_NETWORKS: '10.0.0.0/33' }));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('WEBHOOK_ALLOW_NETWORKS');
  });

  it('a name resolving to a loopback address is refused at delivery, and delivered with the allow-list', async () => {
    const r = await receiver();
    const id = await endpoint(`http://localhost:${r.port}/hook`);
    await rows(1);
    const d = await deliverer();
    await waitFor('the delivery refused', async () => (await states(id))[0]?.state === 'parked', 15_000);
    expect(await states(id)).toEqual([
      { state: 'parked', error: 'refused: localhost resolves to a private address' },
    ]);
    expect(r.received).toHaveLength(0);
    await d.stop();
    await store.removeEndpoint(id);

    // A name of the operator's own network (resolved by the test's resolver), allowed: delivered.
    const named = await endpoint(`http://hooks.internal.test:${r.port}/hook`);
    await rows(1);
    await deliverer({
      allowNetworks: '127.0.0.0/8',
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    // Its state is written once the answer is read, after the receiver saw the request: wait on it.
    await waitFor(
      'the delivery to the allowed name',
      async () => (await states(named))[0]?.state === 'delivered',
      15_000,
    );
    expect(r.received).toHaveLength(1);
    expect((await states(named)).map((s) => s.state)).toEqual(['delivered']);
    expect(r.received[0]?.headers.host).toBe(`hooks.internal.test:${r.port}`);
  });

  it('DNS rebinding: the connection goes to the address checked, never to a second answer', async () => {
    // 127.0.0.2 stands for a public receiver (allowed), 127.0.0.1 for an internal service (not):
    // the name answers the first, then the second to every later lookup.
    const internal = await receiver();
    const outside = await receiver(() => 200, { host: '127.0.0.2', port: internal.port });
    let lookups = 0;
    const resolve = async (): Promise<ResolvedAddress[]> =>
      lookups++ === 0 ? [{ address: '127.0.0.2', family: 4 }] : [{ address: '127.0.0.1', family: 4 }];
    const id = await endpoint(`http://rebind.test:${internal.port}/hook`);
    await rows(1);
    await deliverer({ allowNetworks: '127.0.0.2/32', resolve });
    await waitFor('the delivery', async () => (await states(id))[0]?.state === 'delivered', 15_000);
    expect(outside.received).toHaveLength(1);
    expect(internal.received).toHaveLength(0);
    expect(lookups).toBe(1);
  });

  it('deliveries show no connection detail (no port-scan oracle): a closed port reads as no answer', async () => {
    const r = await receiver();
    await r.down();
    const id = await endpoint(`http://127.0.0.1:${r.port}/hook`);
    await rows(1);
    await deliverer({ allowNetworks: '127.0.0.0/8', retryPeriodMs: 300 });
    await waitFor('the delivery parked', async () => (await states(id))[0]?.state === 'parked', 15_000);
    const [row] = await states(id);
    // Parked by its own last attempt at the deadline, or — when five quick failures paused the
    // endpoint first (WEBHOOK_BREAKER_FAILURES) — expired while paused: which comes first is a race
    // of the retry backoff with the 300 ms period. Either way the same words, no connection detail.
    expect(row?.error).toMatch(
      /^no answer \(connection failed or timed out\) \(retry period over( while the endpoint was paused)?\)$/,
    );
    expect(row?.error).not.toMatch(/ECONN|refused|timeout/i);
  });
});

describe('one endpoint never starves the rest; the queue is bounded', () => {
  it('a slow endpoint holds at most WEBHOOK_ENDPOINT_CONCURRENCY slots: a fast one is served meanwhile', async () => {
    // The slow receiver answers nothing until the test lets it (a receiver taking its time).
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let slowArrived = 0;
    const slow = await receiver(async () => {
      slowArrived++;
      await gate;
      return 200;
    });
    const fast = await receiver();
    // The slow endpoint first: in one FIFO its 20 rows would come before the fast one's.
    const slowId = await endpoint(slow.url);
    const fastId = await endpoint(fast.url);
    await rows(20);
    await deliverer({
      allowNetworks: '127.0.0.0/8',
      concurrency: 16,
      endpointConcurrency: 4,
      timeoutMs: 60_000,
    });
    try {
      await waitFor(
        "the fast endpoint's 20 deliveries",
        async () => (await states(fastId)).filter((s) => s.state === 'delivered').length === 20,
        15_000,
      );
      expect(fast.received).toHaveLength(20);
      // Meanwhile the slow one had its cap in flight, none answered.
      expect(slowArrived).toBe(4);
      expect((await states(slowId)).filter((s) => s.state === 'delivered')).toHaveLength(0);
    } finally {
      release();
    }
    await waitFor(
      "the slow endpoint's 20 deliveries",
      async () => (await states(slowId)).filter((s) => s.state === 'delivered').length === 20,
      30_000,
    );
  });

  it('a failing endpoint is paused after WEBHOOK_BREAKER_FAILURES, probed every WEBHOOK_BREAKER_PROBE_MS, resumed by a 2xx', async () => {
    let n = 0;
    // Three failures pause it; the first probe fails too, the second is answered.
    const r = await receiver(() => (n++ < 4 ? 500 : 200));
    const id = await endpoint(r.url);
    await rows(3);
    const probeMs = 1_500;
    const d = await deliverer({
      allowNetworks: '127.0.0.0/8',
      endpointConcurrency: 1,
      breakerFailures: 3,
      breakerProbeMs: probeMs,
    });
    await waitFor(
      'every row delivered',
      async () => {
        const s = await states(id);
        return s.length === 3 && s.every((x) => x.state === 'delivered');
      },
      20_000,
    );
    const at = r.received.map((x) => x.at);
    expect(r.received.slice(0, 5).map((x) => x.status)).toEqual([500, 500, 500, 500, 200]);
    // Nothing was sent between the pause and its probe, nor between a failed probe and the next.
    expect(at[3]! - at[2]!).toBeGreaterThanOrEqual(probeMs);
    expect(at[4]! - at[3]!).toBeGreaterThanOrEqual(probeMs);
    expect(r.received).toHaveLength(4 + 3);
    expect((await d.metrics.paused.get()).values[0]?.value).toBe(0);
  });

  it('an endpoint failing for WEBHOOK_BREAKER_FAILING_MS is paused whatever the count (each attempt hangs until the time-out), and probed back', async () => {
    // The receiver takes every request and answers none until the test lets it: each attempt
    // fails at the deliverer's time-out, slowly reaching any count.
    let hang = true;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const arrived: number[] = [];
    const r = await receiver(async () => {
      arrived.push(Date.now());
      if (hang) await gate;
      return 200;
    });
    const id = await endpoint(r.url);
    await rows(3);
    const failingMs = 1_000;
    const breakerFailures = 1_000;
    const d = await deliverer({
      allowNetworks: '127.0.0.0/8',
      endpointConcurrency: 1,
      timeoutMs: 250,
      breakerFailures,
      breakerFailingMs: failingMs,
      breakerProbeMs: 1_000,
    });
    const paused = async () => (await d.metrics.paused.get()).values[0]?.value === 1;
    try {
      await waitFor('the endpoint paused', paused, 10_000);
      const pausedAt = Date.now();
      // Opened by the time it failed, far below the count; not before it had failed that long
      // (counted from the first attempt's sending, a few ms before the receiver saw it).
      expect(arrived.length).toBeGreaterThan(0);
      expect(arrived.length).toBeLessThan(breakerFailures);
      expect(pausedAt - arrived[0]!).toBeGreaterThanOrEqual(failingMs - 50);
      expect((await states(id)).every((s) => s.state === 'pending')).toBe(true);
    } finally {
      hang = false;
      release();
    }
    // A probe answered resumes it: every row delivered, nothing paused.
    await waitFor(
      'every row delivered after the probe',
      async () => {
        const s = await states(id);
        return s.length === 3 && s.every((x) => x.state === 'delivered');
      },
      20_000,
    );
    expect((await d.metrics.paused.get()).values[0]?.value).toBe(0);
  });

  it("a paused endpoint's rows past WEBHOOK_RETRY_PERIOD_MS are parked without waiting for probes: its queue stays bounded", async () => {
    // Connection refused: a port bound, then let go.
    const r = await receiver(() => 200);
    const url = r.url;
    await r.close();
    const id = await endpoint(url);
    await rows(20);
    await deliverer({
      allowNetworks: '127.0.0.0/8',
      endpointConcurrency: 1,
      breakerFailures: 2,
      // No probe within the test: only the retry period may end the rows.
      breakerProbeMs: 600_000,
      retryPeriodMs: 1_500,
    });
    // Paused after 2 failures, every row left pending (the 2 tried wait for their retry); one
    // probe every 10 min would park one row each time, so a dead endpoint's queue grew as fast
    // as rows came.
    await waitFor(
      'every row parked',
      async () => {
        const s = await states(id);
        return s.length === 20 && s.every((x) => x.state === 'parked');
      },
      10_000,
    );
    const s = await states(id);
    expect(
      s.filter((x) => x.error?.includes('retry period over while the endpoint was paused')),
    ).toHaveLength(20);
  });

  it('410 Gone disables the endpoint: its pending rows parked, nothing more queued, until enable', async () => {
    let gone = true;
    const r = await receiver(() => (gone ? 410 : 200));
    const id = await endpoint(r.url);
    await rows(5);
    await deliverer({ allowNetworks: '127.0.0.0/8', endpointConcurrency: 1 });
    await waitFor(
      'the endpoint disabled',
      async () => {
        const s = await states(id);
        return s.length === 5 && s.every((x) => x.state === 'parked');
      },
      15_000,
    );
    const s = await states(id);
    expect(s.filter((x) => x.error === 'HTTP 410 (endpoint disabled)')).toHaveLength(1);
    expect(s.filter((x) => x.error === 'endpoint disabled: HTTP 410 Gone')).toHaveLength(4);
    expect(r.received).toHaveLength(1);
    const list = await runCli(['webhooks', 'list', '--json'], cliEnv());
    expect(list.code).toBe(0);
    const shown = (JSON.parse(list.stdout) as { id: number; disabled: { reason: string } | null }[]).find(
      (e) => e.id === id,
    );
    expect(shown?.disabled?.reason).toBe('HTTP 410 Gone');
    // Rows written while it is disabled are not queued.
    await rows(2);
    await new Promise((res) => setTimeout(res, 300));
    expect(await states(id)).toHaveLength(5);

    gone = false;
    expect((await runCli(['webhooks', 'enable', String(id)], cliEnv())).code).toBe(0);
    expect((await runCli(['webhooks', 'retry', '--endpoint', String(id)], cliEnv())).code).toBe(0);
    await waitFor(
      'every row delivered after enable and retry',
      async () => {
        const all = await states(id);
        return all.length === 7 && all.every((x) => x.state === 'delivered');
      },
      15_000,
    );
  });

  it('parked rows are deleted after WEBHOOK_PARKED_RETENTION_MS; the parked gauge per endpoint says how many', async () => {
    const r = await receiver(() => 404);
    const id = await endpoint(r.url);
    await rows(3);
    const first = await deliverer({ allowNetworks: '127.0.0.0/8', parkedRetentionMs: 0 });
    await waitFor(
      '3 parked',
      async () => (await states(id)).filter((s) => s.state === 'parked').length === 3,
      15_000,
    );
    await first.stop();
    // Kept with retention 0; a deliverer with a retention shorter than their age deletes them.
    expect(await states(id)).toHaveLength(3);
    await new Promise((res) => setTimeout(res, 20));
    await deliverer({ allowNetworks: '127.0.0.0/8', parkedRetentionMs: 10 });
    await waitFor('parked rows pruned', async () => (await states(id)).length === 0, 15_000);
  });
});
