import type { LookupAddress } from 'node:dns';
import { request as httpRequest, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { type HealthCheck, redactText, serveMetrics } from '@vault-yield/common';
import { activityTypes } from '@vault-yield/domain';
import {
  createPgPool,
  createWebhookLimits,
  createWebhookStore,
  type DeliveryOutcome,
  type DueDelivery,
  hasWebhookTables,
  liveRecord,
  type Pool,
  type PoolClient,
} from '@vault-yield/store';
import {
  type AllowList,
  type Checked,
  checkDestination,
  parseAllowList,
  type Resolve,
  type ResolvedAddress,
  systemResolve,
} from './address.js';
import {
  type ResolvedWebhookDelivererConfig,
  type WakeUpSource,
  WEBHOOK_DEFAULTS,
  type WebhookDelivererConfig,
  webhookDelivererConfigSchema,
} from './config.js';
import { createWebhookMetrics, type WebhookMetrics } from './metrics.js';
import { webhookHeaders } from './sign.js';

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

/** What an answer (or its absence) means for a delivery. */
export type AttemptResult =
  | { kind: 'delivered'; status: number }
  | { kind: 'retry'; status: number | null; error: string; retryAfterMs?: number }
  | { kind: 'park'; status: number | null; error: string; disable?: true };

/**
 * 2xx: delivered. 408, 429 and 5xx: retried (a `Retry-After` in seconds or as a date is honoured,
 * within the backoff's maximum). 410 Gone parks it and disables the endpoint (Standard Webhooks:
 * the receiver is gone for good). Anything else — another 4xx, a 3xx (redirects are not followed:
 * the signature names the URL the operator registered), 1xx — parks at once: the receiver refused
 * this delivery and would refuse it again.
 */
export function classify(status: number, retryAfter: string | null, now = Date.now()): AttemptResult {
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status === 408 || status === 429 || status >= 500) {
    let retryAfterMs: number | undefined;
    if (retryAfter) {
      const seconds = Number(retryAfter);
      if (Number.isFinite(seconds) && seconds >= 0) retryAfterMs = seconds * 1000;
      else {
        const at = Date.parse(retryAfter);
        if (Number.isFinite(at)) retryAfterMs = Math.max(0, at - now);
      }
    }
    return {
      kind: 'retry',
      status,
      error: `HTTP ${status}`,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
  }
  if (status === 410) return { kind: 'park', status, error: 'HTTP 410 (endpoint disabled)', disable: true };
  return {
    kind: 'park',
    status,
    error: status >= 300 && status < 400 ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`,
  };
}

/** Exponential backoff with jitter: base·2^attempt, at most max, drawn in [½, 1] of it. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random = Math.random): number {
  const full = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 40));
  return Math.round(full / 2 + (random() * full) / 2);
}

/**
 * What `webhooks deliveries` shows for an attempt that got no answer: one class, never the
 * connection's detail (refused, reset, unreachable, timed out) — that would make the queue a port
 * scanner of whatever the endpoint's host reaches. The deliverer's debug log has the detail.
 */
export const NO_ANSWER = 'no answer (connection failed or timed out)';

/** A send failure's detail, for the log only (never the URL: it may carry a key). */
function failureDetail(err: unknown): string {
  if (err instanceof Error) {
    if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'timeout';
    const code = (err as { code?: unknown }).code;
    return redactText(typeof code === 'string' ? code : err.message).slice(0, 200);
  }
  return 'unknown error';
}

/** Where deliveries may go: the operator's allowed networks and how names resolve. */
export interface Destinations {
  allow: AllowList;
  resolve: Resolve;
  log?: { debug: (o: object, m: string) => void };
}

/** POSTs `body` to `url`, connected to `to` (the checked address) whatever the name resolves to now. */
function post(
  url: URL,
  to: ResolvedAddress,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<{ status: number; retryAfter: string | null }> {
  // The socket's lookup answers the checked address: no second DNS answer (rebinding) is asked for.
  // Host header and TLS name (SNI, certificate check) stay the URL's host.
  const lookup: LookupFunction = (_host, options, cb) => {
    if (options.all) (cb as unknown as (e: null, a: LookupAddress[]) => void)(null, [to]);
    else cb(null, to.address, to.family);
  };
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup,
      signal: AbortSignal.timeout(timeoutMs),
    });
    req.on('response', (res) => {
      // The answer's body is not read: free the connection for the next delivery.
      res.resume();
      const retryAfter = res.headers['retry-after'];
      resolve({
        status: res.statusCode ?? 0,
        retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * One attempt: the host resolved once and every address checked (one forbidden parks the
 * delivery: `refused: <host> resolves to a private address`), then a POST with the Standard
 * Webhooks headers to the checked address. Redirects are not followed.
 */
export async function attempt(d: DueDelivery, timeoutMs: number, dest: Destinations): Promise<AttemptResult> {
  let url: URL;
  try {
    url = new URL(d.url);
  } catch {
    return { kind: 'park', status: null, error: 'not a URL' };
  }
  let checked: Checked;
  try {
    checked = await checkDestination(url, dest.allow, dest.resolve);
  } catch (err) {
    dest.log?.debug({ endpoint: d.endpointId, detail: failureDetail(err) }, 'webhook host not resolved');
    return { kind: 'retry', status: null, error: 'host name not resolved' };
  }
  if (!checked.ok) return { kind: 'park', status: null, error: checked.reason };
  try {
    const res = await post(
      url,
      checked.address,
      webhookHeaders(d.secret, d.msgId, d.body),
      d.body,
      timeoutMs,
    );
    return classify(res.status, res.retryAfter);
  } catch (err) {
    dest.log?.debug({ endpoint: d.endpointId, detail: failureDetail(err) }, 'webhook attempt got no answer');
    return { kind: 'retry', status: null, error: NO_ANSWER };
  }
}

/** A database failure as one short line: its code, else its message (redacted). */
function dbFailureText(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return redactText(typeof code === 'string' ? `${code}: ${err.message}` : err.message).slice(0, 200);
  }
  return 'unknown error';
}

/** The deliverer's lock: one deliverer per webhooks schema sends (others wait their turn). */
const lockKey = (schema: string) => `vault-yield-webhooks:${schema}`;

/** How often the lock's session is asked whether it still holds the lock (besides its end event). */
const LOCK_CHECK_MS = 1_000;

/** Delay before trying again after `failures` failed rounds in a row: ½ s doubling, at most 10 s. */
const retryDelay = (failures: number) => Math.min(10_000, 250 * 2 ** Math.min(failures, 6));

/** The lock's session ended or no longer holds the lock: the deliverer stops sending and takes it again. */
class LockLost extends Error {
  constructor() {
    super('the deliverer lock was lost (its database session ended)');
  }
}

/**
 * A wake-up source from Postgres `LISTEN channel` (the projector's commit notifications): each
 * notification wakes the deliverer. A lost connection is made again; polling covers the gap.
 */
export function listenWakeUp(
  databaseUrl: string,
  channel: string,
  log?: { warn: (o: object, m: string) => void },
): WakeUpSource {
  return async (wake) => {
    const pool = createPgPool({
      url: databaseUrl,
      applicationName: 'vault-yield-webhooks-listen',
      max: 1,
      connectionTimeoutMs: WEBHOOK_DEFAULTS.connectTimeoutMs,
    });
    let client: PoolClient | undefined;
    let stopped = false;
    let retry: NodeJS.Timeout | undefined;
    const again = (ms: number) => {
      clearTimeout(retry);
      if (!stopped) retry = setTimeout(() => void connect(), ms);
    };
    const connect = async (): Promise<void> => {
      let c: PoolClient | undefined;
      // A cut connection (Postgres restarting) ends with 'error' or 'end' or both: listen again once.
      let gone = false;
      const lost = () => {
        if (gone || stopped || !c) return;
        gone = true;
        c.release(true);
        if (client === c) client = undefined;
        again(1_000);
      };
      try {
        c = await pool.connect();
        c.on('notification', () => wake());
        c.on('error', lost);
        c.on('end', lost);
        await c.query(`listen "${channel.replaceAll('"', '""')}"`);
        client = c;
        wake();
      } catch (err) {
        lost();
        log?.warn({ err }, 'listen failed; polling meanwhile');
        again(5_000);
      }
    };
    await connect();
    return async () => {
      stopped = true;
      clearTimeout(retry);
      client?.release(true);
      await pool.end().catch(() => {});
    };
  };
}

export function createWebhookDeliverer(input: WebhookDelivererConfig): WebhookDeliverer {
  const config: ResolvedWebhookDelivererConfig = webhookDelivererConfigSchema.parse(input);
  const log = config.logger;
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
  const metrics = createWebhookMetrics(true, () => health().ok);
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
  const destinations: Destinations = {
    allow: parseAllowList(config.allowNetworks),
    resolve: config.resolve ?? systemResolve,
    log,
  };
  /**
   * Per endpoint, its failed attempts in a row, since when it fails and, when paused (the breaker open), until when:
   * nothing is sent to it but one probe after that; a probe answered resumes it, a failed one
   * pauses it again. In memory: a restarted deliverer starts with every endpoint closed.
   */
  const breakers = new Map<
    number,
    { failures: number; failingSince: number | null; pausedUntil: number | null; probing: boolean }
  >();
  /** When each endpoint last answered (anything but a failure): a failure sent before it does not date its streak. */
  const answeredAt = new Map<number, number>();
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
   * (endpoint, vault) pairs with a delivery in flight: their next one waits for its outcome. A
   * pair stays here until its outcome is recorded (or dropped when another deliverer took over).
   */
  const inFlight = new Map<string, Promise<void>>();
  /**
   * Outcomes of finished sends, recorded (then their pairs freed) at the next turn. Kept while the
   * database does not answer: recorded once it does, before anything new is sent.
   */
  const finished: { key: string; outcome: DeliveryOutcome }[] = [];

  function outcomeOf(d: DueDelivery, r: AttemptResult, now: number): DeliveryOutcome {
    if (r.kind === 'delivered') return { id: d.id, state: 'delivered', status: r.status, error: null };
    if (r.kind === 'park') return { id: d.id, state: 'parked', status: r.status, error: r.error };
    const deadline = d.deadline.getTime();
    if (now >= deadline)
      return { id: d.id, state: 'parked', status: r.status, error: `${r.error} (retry period over)` };
    const delay = Math.max(
      backoffDelay(d.attempts, config.backoffBaseMs, config.backoffMaxMs),
      Math.min(r.retryAfterMs ?? 0, config.backoffMaxMs),
    );
    // The last attempt falls on the deadline itself: a failure then parks it.
    return {
      id: d.id,
      state: 'pending',
      status: r.status,
      error: r.error,
      nextAttemptAt: new Date(Math.min(now + delay, deadline)),
    };
  }

  /**
   * The breaker after an attempt sent at `sentAt`: a failure counts, any answer of the receiver
   * resets it. It opens after `breakerFailures` failures in a row, or when the endpoint has failed
   * for `breakerFailingMs` (from the first failed attempt's sending, none answered since) whatever
   * the count: an endpoint whose attempts each hang until the time-out reaches the count slowly.
   */
  function breakerAfter(endpointId: number, r: AttemptResult, sentAt: number): void {
    const now = Date.now();
    const b = breakers.get(endpointId) ?? {
      failures: 0,
      failingSince: null,
      pausedUntil: null,
      probing: false,
    };
    breakers.set(endpointId, b);
    const wasProbe = b.probing;
    b.probing = false;
    if (r.kind === 'retry') {
      b.failures++;
      // A failure of an attempt sent before the last answer counts from that answer on.
      const since = Math.max(sentAt, answeredAt.get(endpointId) ?? sentAt);
      b.failingSince = b.failingSince === null ? since : Math.min(b.failingSince, since);
      const failingMs = now - b.failingSince;
      const tooMany = b.failures >= config.breakerFailures;
      const tooLong = config.breakerFailingMs > 0 && failingMs >= config.breakerFailingMs;
      if (wasProbe || (b.pausedUntil === null && (tooMany || tooLong))) {
        if (b.pausedUntil === null)
          log.warn(
            { endpoint: endpointId, failures: b.failures, failingMs, probeMs: config.breakerProbeMs },
            tooMany
              ? 'webhook endpoint paused: it failed too many times in a row (one probe delivery at a time from now on)'
              : 'webhook endpoint paused: it has failed for WEBHOOK_BREAKER_FAILING_MS without an answer (one probe delivery at a time from now on)',
          );
        b.pausedUntil = now + config.breakerProbeMs;
      }
    } else if (r.status !== null) {
      if (b.pausedUntil !== null)
        log.info({ endpoint: endpointId }, 'webhook endpoint answered its probe: resumed');
      breakers.delete(endpointId);
      answeredAt.set(endpointId, now);
    }
    metrics.paused.set([...breakers.values()].filter((x) => x.pausedUntil !== null).length);
  }

  /** How many more sends `endpointId` may take now (its in-flight cap, its breaker). */
  function room(endpointId: number, inFlightOf: Map<number, number>, now: number): number {
    const b = breakers.get(endpointId);
    if (b?.pausedUntil != null) {
      if (b.probing || now < b.pausedUntil) return 0;
      return (inFlightOf.get(endpointId) ?? 0) === 0 ? 1 : 0;
    }
    return config.endpointConcurrency - (inFlightOf.get(endpointId) ?? 0);
  }

  function send(d: DueDelivery): void {
    const key = `${d.endpointId}:${d.vault}`;
    const started = performance.now();
    const sentAt = Date.now();
    metrics.inFlight.inc();
    const p = attempt(d, config.timeoutMs, destinations).then((r) => {
      metrics.inFlight.dec();
      breakerAfter(d.endpointId, r, sentAt);
      if (r.kind === 'park' && r.disable) gone.add(d.endpointId);
      metrics.duration.observe((performance.now() - started) / 1000);
      const outcome = outcomeOf(d, r, Date.now());
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
            vault: d.vault,
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

  let lockClient: PoolClient | undefined;
  let unwatchLock: () => void = () => {};
  let lockLost = false;
  let lockCheckedAt = 0;

  /** Throws LockLost unless the lock's session is there and holds the lock (asked once a second). */
  async function checkLock(): Promise<void> {
    if (lockLost || !lockClient) throw new LockLost();
    if (Date.now() - lockCheckedAt < LOCK_CHECK_MS) return;
    // A session whose server answers nothing fails at the pool's query time-out: lost too.
    const held = await lockClient
      .query<{ held: boolean }>(
        `select exists (select 1 from pg_locks where locktype = 'advisory' and pid = pg_backend_pid() and granted) as held`,
      )
      .then(
        (r) => r.rows[0]?.held === true,
        () => false,
      );
    if (!held) {
      lockLost = true;
      throw new LockLost();
    }
    lockCheckedAt = Date.now();
  }

  /** One turn: record outcomes, move cursors, start due sends. True when there may be more work at once. */
  async function turn(): Promise<boolean> {
    await checkLock();
    await flush();
    for (const id of gone) {
      // 410 Gone (Standard Webhooks): the receiver is gone for good; its pending rows are parked.
      if (await limits.disableEndpoint(id, 'HTTP 410 Gone'))
        log.warn(
          { endpoint: id },
          'webhook endpoint answered 410 Gone: disabled (`vault-yield webhooks enable` resumes it)',
        );
      gone.delete(id);
      breakers.delete(id);
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
      if (lockLost) throw new LockLost();
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
        if (inFlight.has(`${d.endpointId}:${d.vault}`) || room(d.endpointId, inFlightOf, now) <= 0) continue;
        const b = breakers.get(d.endpointId);
        if (b?.pausedUntil != null) b.probing = true;
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
      const paused = [...breakers].filter(([, b]) => b.pausedUntil !== null).map(([id]) => id);
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
    while (!stopping && !lockLost) {
      kicked = false;
      try {
        const busy = await turn();
        failures = 0;
        roundOk();
        if (!busy) await sleep(config.pollIntervalMs);
      } catch (err) {
        if (err instanceof LockLost || lockLost) break;
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

  /** Lets the lock go: unlocked on a live session, a lost or failing session discarded. */
  async function releaseLock(): Promise<void> {
    const client = lockClient;
    lockClient = undefined;
    metrics.active.set(0);
    if (!client) return;
    unwatchLock();
    const unlocked =
      !lockLost &&
      (await client.query('select pg_advisory_unlock_all()').then(
        () => true,
        () => false,
      ));
    client.release(!unlocked);
  }

  /** Holds `client` as the lock's session; its end (Postgres restarting, the session killed) is noticed at once. */
  function holdLock(client: PoolClient): void {
    lockClient = client;
    lockLost = false;
    lockCheckedAt = Date.now();
    const lost = () => {
      if (lockClient !== client) return;
      lockLost = true;
      wake();
    };
    client.on('error', lost);
    client.on('end', lost);
    unwatchLock = () => {
      client.off('error', lost);
      client.off('end', lost);
    };
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
        const client = await lockPool.connect();
        let ok = false;
        try {
          const { rows } = await client.query<{ ok: boolean }>(
            'select pg_try_advisory_lock(hashtext($1)) as ok',
            [lockKey(config.schema)],
          );
          ok = rows[0]?.ok === true;
        } catch (err) {
          client.release(true);
          throw err;
        }
        failures = 0;
        roundOk();
        if (ok) {
          holdLock(client);
          return true;
        }
        client.release();
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
