import type { Server } from 'node:http';
import { type Context, type HealthCheck, redactText, serveMetrics } from '@vault-yield/common';
import { activityTypes, vaultIdOf } from '@vault-yield/domain';
import {
  createPgPool,
  createWebhookLimits,
  createWebhookStore,
  type DeliveryOutcome,
  type DueDelivery,
  hasWebhookTables,
  liveRecord,
  type Pool,
} from '@vault-yield/store';
import { parseAllowList, systemResolve } from './address.js';
import { attempt, type Destinations, outcomeOf } from './attempt.js';
import { createBreakers } from './breaker.js';
import {
  type ResolvedWebhookDelivererConfig,
  type WebhookDelivererConfig,
  webhookDelivererConfigSchema,
} from './config.js';
import { createDelivererLock, LockLost } from './lock.js';
import { createWebhookMetrics, type WebhookMetrics } from './metrics.js';

export interface WebhookDeliverer {
  /** Takes the deliverer lock (waits while another deliverer holds it), then delivers until stop. */
  start(): Promise<void>;
  /** Finishes the deliveries in flight (each within the time-out), records them, releases everything. */
  stop(): Promise<void>;
  /** Look for new rows and due retries now (a wake-up source calls it). */
  wake(): void;
  /** Resolves when the loop ends after stop(); rejects when it failed. */
  readonly done: Promise<void>;
  readonly metrics: WebhookMetrics;
  /** The metrics server's port, when one listens. */
  metricsPort(): number | undefined;
}

/** A database failure as one short line: its code, else its message (redacted). */
function dbFailureText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return redactText(typeof code === 'string' ? `${code}: ${err.message}` : err.message).slice(0, 200);
  }
  return 'unknown error';
}

/**
 * A delivery's queue: its endpoint and its vault (chain and address: the same address on two
 * chains is two queues, one's held row never holds the other's).
 */
const queueKey = (d: DueDelivery): string => `${d.endpointId}:${vaultIdOf(d)}`;

/** Delay before trying again after `failures` failed rounds in a row: ½ s doubling, at most 10 s. */
const retryDelay = (failures: number) => Math.min(10_000, 250 * 2 ** Math.min(failures, 6));

/**
 * The deliverer of `input`, handed the process's context (its logger and registry); without one
 * (a test), `input.logger` and a registry of its own.
 */
export function createWebhookDeliverer(input: WebhookDelivererConfig, ctx?: Context): WebhookDeliverer {
  const config: ResolvedWebhookDelivererConfig = webhookDelivererConfigSchema.parse(input);
  const log = ctx?.log ?? config.logger;
  // What /health and webhooks_deliverer_healthy say: the last round's failure, when it failed,
  // and when a round (standing by: a lock attempt) last completed.
  let failing: string | null = null;
  let lastOkAt = Date.now();
  let role: 'starting' | 'standby' | 'active' = 'starting';
  const health: HealthCheck = () => {
    if (failing !== null) return { ok: false, reason: `database error: ${failing}` };
    const silent = Date.now() - lastOkAt;
    if (silent > config.healthStaleMs)
      return { ok: false, reason: `no round completed for ${Math.round(silent / 1000)} s` };
    return { ok: true, status: role };
  };
  const metrics = createWebhookMetrics(ctx?.metrics ?? true, () => health().ok);
  const roundOk = () => {
    failing = null;
    lastOkAt = Date.now();
  };
  const roundFailed = (err: unknown) => {
    failing = dbFailureText(err);
  };
  // Every statement and connection bounded: a round never waits for ever on a database away —
  // nor on one that does not answer at all (frozen, or its host gone without a word), 2 s past
  // the statement timeout Postgres would have applied.
  const timeouts = {
    connectionTimeoutMs: config.connectTimeoutMs,
    statementTimeoutMs: config.statementTimeoutMs,
    idleInTransactionTimeoutMs: config.idleInTransactionTimeoutMs,
    queryTimeoutMs: config.statementTimeoutMs + 2_000,
  };
  const pool: Pool = createPgPool({
    url: config.databaseUrl,
    applicationName: 'vault-yield-webhooks',
    max: 3,
    pooling: config.pooling,
    ...timeouts,
  });
  // The lock is a session's (held as long as this deliverer runs): behind a transaction-mode
  // pooler it needs a connection straight to Postgres.
  const lockPool: Pool = config.directUrl
    ? createPgPool({
        url: config.directUrl,
        applicationName: 'vault-yield-webhooks-lock',
        max: 1,
        ...timeouts,
      })
    : pool;
  const store = createWebhookStore(pool, config.schema, config.secretKeys);
  const limits = createWebhookLimits(pool, config.schema);
  // The lock's session ending wakes the loop: it stops sending at once.
  const lock = createDelivererLock(lockPool, config.schema, () => wake());
  const destinations: Destinations = {
    allow: parseAllowList(config.allowNetworks),
    resolve: config.resolve ?? systemResolve,
    log,
  };
  /** Per endpoint, its circuit breaker: a paused endpoint is sent one probe at a time. */
  const breakers = createBreakers(config, log, metrics.paused);
  /** Endpoints that answered 410 Gone: disabled at the next turn, after their outcomes are recorded. */
  const gone = new Set<number>();
  let stopping = false;
  let started = false;
  let server: Server | undefined;
  let stopWake: (() => Promise<void>) | undefined;
  let resolveDone!: () => void;
  let rejectDone!: (err: unknown) => void;
  const done = new Promise<void>((res, rej) => {
    resolveDone = res;
    rejectDone = rej;
  });
  done.catch(() => {});
  // Wake-ups: one pending promise the loop waits on, resolved by wake(), a finished send or stop().
  let kick: () => void = () => {};
  let kicked = false;
  const wake = () => {
    kicked = true;
    kick();
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (kicked || stopping) return resolve();
      const timer = setTimeout(finish, ms);
      function finish() {
        clearTimeout(timer);
        kick = () => {};
        resolve();
      }
      kick = finish;
    });

  /**
   * (endpoint, vault id) pairs with a delivery in flight: their next one waits for its outcome. A
   * pair stays here until its outcome is recorded (or dropped when another deliverer took over).
   */
  const inFlight = new Map<string, Promise<void>>();
  /**
   * Outcomes of finished sends, recorded (then their pairs freed) at the next turn. Kept while the
   * database does not answer: recorded once it does, before anything new is sent.
   */
  const finished: { key: string; outcome: DeliveryOutcome }[] = [];

  function send(d: DueDelivery): void {
    const key = queueKey(d);
    const started = performance.now();
    const sentAt = Date.now();
    metrics.inFlight.inc();
    const p = attempt(d, config.timeoutMs, destinations).then((r) => {
      metrics.inFlight.dec();
      breakers.after(d.endpointId, r, sentAt);
      if (r.kind === 'park' && r.disable) gone.add(d.endpointId);
      metrics.duration.observe((performance.now() - started) / 1000);
      const outcome = outcomeOf(d, r, Date.now(), config);
      const label =
        outcome.state === 'delivered' ? 'delivered' : outcome.state === 'parked' ? 'parked' : 'retry';
      metrics.attempts.inc({ outcome: label });
      if (outcome.state === 'parked')
        log.warn(
          {
            endpoint: d.endpointId,
            url: redactText(d.url),
            delivery: d.id,
            webhookId: d.msgId,
            vault: vaultIdOf(d),
            status: outcome.status,
            error: outcome.error,
          },
          'webhook delivery parked',
        );
      else if (outcome.state === 'pending')
        log.debug(
          {
            endpoint: d.endpointId,
            delivery: d.id,
            status: outcome.status,
            error: outcome.error,
            next: outcome.nextAttemptAt,
          },
          'webhook delivery failed; retrying later',
        );
      finished.push({ key, outcome });
      wake();
    });
    inFlight.set(key, p);
  }

  async function flush(): Promise<void> {
    if (finished.length === 0) return;
    // Removed only once recorded (sends finishing meanwhile append behind them).
    const batch = finished.slice();
    await store.recordOutcomes(batch.map((f) => f.outcome));
    finished.splice(0, batch.length);
    for (const f of batch) inFlight.delete(f.key);
  }

  /**
   * Another deliverer holds the lock: outcomes this one could not record are dropped and their
   * pairs freed — the holder sends those rows again (at least once; receivers dedupe by webhook-id).
   */
  function dropUnrecorded(): void {
    if (finished.length === 0 && inFlight.size === 0) return;
    log.warn(
      { outcomes: finished.length, inFlight: inFlight.size },
      'outcomes not recorded are dropped (the deliverer holding the lock sends those rows again)',
    );
    finished.length = 0;
    inFlight.clear();
  }

  /** The projection schema whose ledger is delivered: the views' live one, else PROJECTION_SCHEMA. */
  async function ledgerSchema(): Promise<string> {
    return (await liveRecord(pool, config.viewsSchema))?.schema ?? config.projectionSchema;
  }

  let lastScan = 0;
  let lastHousekeeping = 0;
  let lastExpiry = 0;
  let scanAgain = true;

  /** One turn: record outcomes, move cursors, start due sends. True when there may be more work at once. */
  async function turn(): Promise<boolean> {
    await lock.check();
    await flush();
    for (const id of gone) {
      // 410 Gone (Standard Webhooks): the receiver is gone for good; its pending rows are parked.
      if (await limits.disableEndpoint(id, 'HTTP 410 Gone'))
        log.warn(
          { endpoint: id },
          'webhook endpoint answered 410 Gone: disabled (`vault-yield webhooks enable` resumes it)',
        );
      gone.delete(id);
      breakers.forget(id);
    }
    const now = Date.now();
    let busy = false;
    if (scanAgain || now - lastScan >= config.pollIntervalMs) {
      lastScan = now;
      scanAgain = false;
      const schema = await ledgerSchema();
      const deadline = new Date(now + config.retryPeriodMs);
      // A disabled endpoint's cursor stays: nothing is queued for it until `webhooks enable`.
      const disabled = new Set((await limits.disabledEndpoints()).map((e) => e.id));
      for (const id of await store.endpointIds()) {
        if (disabled.has(id)) continue;
        const r = await store.enqueue(id, schema, { limit: config.scanBatch, activityTypes, deadline });
        if (r.switched)
          log.info({ endpoint: id, ledgerSchema: schema }, 'live schema changed: cursor moved to its ledger');
        metrics.scanned.inc(r.scanned);
        metrics.queued.inc(r.queued);
        if (r.scanned >= config.scanBatch) scanAgain = busy = true;
      }
    }
    const free = config.concurrency - inFlight.size;
    if (free > 0) {
      // Round robin over endpoints, each within its cap: a slow endpoint holds at most
      // WEBHOOK_ENDPOINT_CONCURRENCY of the slots, a paused one none but its probe.
      const heads = await store.dueHeads(
        free + inFlight.size + breakers.size * config.endpointConcurrency,
        config.endpointConcurrency,
      );
      // The lock's session ended meanwhile: another deliverer may be sending these.
      if (lock.lost) throw new LockLost();
      const inFlightOf = new Map<number, number>();
      for (const key of inFlight.keys()) {
        const id = Number(key.slice(0, key.indexOf(':')));
        inFlightOf.set(id, (inFlightOf.get(id) ?? 0) + 1);
      }
      let started = 0;
      for (const d of heads) {
        if (started >= free) {
          busy = true;
          break;
        }
        if (inFlight.has(queueKey(d)) || breakers.room(d.endpointId, inFlightOf, now) <= 0) continue;
        breakers.sending(d.endpointId);
        inFlightOf.set(d.endpointId, (inFlightOf.get(d.endpointId) ?? 0) + 1);
        send(d);
        started++;
      }
    }
    // A paused endpoint is sent one probe at a time: rows past their retry period would wait
    // for a probe each (one every WEBHOOK_BREAKER_PROBE_MS) and a dead endpoint's queue would
    // grow as fast as rows come. They are parked instead, once a second at most.
    if (now - lastExpiry >= 1_000) {
      lastExpiry = now;
      const paused = breakers.paused();
      const expired = await limits.expirePending(paused);
      if (expired > 0)
        log.warn(
          { endpoints: paused, parked: expired },
          'webhook deliveries parked: their retry period ended while their endpoint was paused',
        );
    }
    if (now - lastHousekeeping >= 10_000) {
      lastHousekeeping = now;
      const counts = await store.counts();
      metrics.pending.set(counts.pending);
      metrics.parked.set(counts.parked);
      // Secrets from before encryption (migration 0025 moved them as they were) are sealed under
      // WEBHOOK_SECRET_KEY; one sealed with a key not configured fails the round, named.
      const sealed = await store.sealPlaintext();
      if (sealed > 0) log.info({ sealed }, 'plaintext webhook secrets sealed under WEBHOOK_SECRET_KEY');
      if (config.retentionMs > 0) await store.pruneDelivered(new Date(now - config.retentionMs));
      if (config.parkedRetentionMs > 0) {
        const pruned = await limits.pruneParked(new Date(now - config.parkedRetentionMs));
        if (pruned > 0)
          log.info({ pruned }, 'parked webhook deliveries past WEBHOOK_PARKED_RETENTION_MS deleted');
      }
      metrics.parkedByEndpoint.reset();
      for (const [endpoint, n] of await limits.parkedByEndpoint())
        metrics.parkedByEndpoint.set({ endpoint: String(endpoint) }, n);
    }
    return busy;
  }

  /** Rounds until stop or until the lock is lost; any database error is tried again. */
  async function loop(): Promise<void> {
    let failures = 0;
    while (!stopping && !lock.lost) {
      kicked = false;
      try {
        const busy = await turn();
        failures = 0;
        roundOk();
        if (!busy) await sleep(config.pollIntervalMs);
      } catch (err) {
        if (err instanceof LockLost || lock.lost) break;
        // Postgres away (restart, failover): the cursors and the queue are there when it returns,
        // the outcomes not recorded are kept for then.
        failures++;
        roundFailed(err);
        log.error({ err, unrecorded: finished.length }, 'webhook round failed; trying again');
        await sleep(retryDelay(failures));
      }
    }
  }

  /** The sends in flight finish (each within the time-out); their outcomes are recorded if the database answers. */
  async function settle(): Promise<void> {
    await Promise.allSettled([...inFlight.values()]);
    await flush().catch((err: unknown) => {
      roundFailed(err);
      log.error(
        { err, unrecorded: finished.length },
        'outcomes of the last deliveries not recorded yet (kept; sent again if another deliverer takes over)',
      );
    });
  }

  /** Lets the lock go (the deliverer no longer active). */
  async function releaseLock(): Promise<void> {
    metrics.active.set(0);
    await lock.release();
  }

  /**
   * Waits for the deliverer lock on a dedicated connection (held until stop or until its session
   * ends). A database error is tried again with backoff (health says so meanwhile).
   */
  async function takeLock(): Promise<boolean> {
    let said = false;
    let failures = 0;
    while (!stopping) {
      try {
        const ok = await lock.take();
        failures = 0;
        roundOk();
        if (ok) return true;
        role = 'standby';
        dropUnrecorded();
        if (!said) log.info({ schema: config.schema }, 'another webhook deliverer is running: standing by');
        said = true;
        await sleep(2_000);
      } catch (err) {
        failures++;
        roundFailed(err);
        log.error({ err }, 'deliverer lock not reachable; trying again');
        await sleep(retryDelay(failures));
      }
      kicked = false;
    }
    return false;
  }

  /** Takes the lock, delivers until stop or until the lock is lost, and again. */
  async function run(): Promise<void> {
    while (!stopping) {
      if (!(await takeLock())) break;
      role = 'active';
      metrics.active.set(1);
      log.info(
        { schema: config.schema, pollIntervalMs: config.pollIntervalMs, concurrency: config.concurrency },
        'webhook deliverer running',
      );
      await loop();
      metrics.active.set(0);
      if (!stopping)
        log.warn(
          { schema: config.schema },
          'webhook deliverer lost its lock (its database session ended): taking it again before sending',
        );
      await settle();
      await releaseLock();
    }
  }

  return {
    metrics,
    done,
    wake,
    metricsPort() {
      const address = server?.address();
      return address && typeof address === 'object' ? address.port : undefined;
    },
    async start() {
      started = true;
      if (config.metricsPort !== undefined)
        server = await serveMetrics(metrics.registry, config.metricsPort, config.metricsHost, health);
      if (!(await hasWebhookTables(pool, config.schema)))
        throw new Error(
          `schema ${config.schema} has no webhook tables: run \`vault-yield migrate\` (migration 0020)`,
        );
      if (config.wakeUp) stopWake = await config.wakeUp(wake);
      run().then(resolveDone, rejectDone);
    },
    async stop() {
      stopping = true;
      wake();
      if (!started) resolveDone();
      await done.catch(() => {});
      await stopWake?.().catch(() => {});
      await releaseLock();
      if (lockPool !== pool) await lockPool.end().catch(() => {});
      await pool.end().catch(() => {});
      if (server) {
        const s = server;
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}
