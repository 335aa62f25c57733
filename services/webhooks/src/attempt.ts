import type { LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { redactText } from '@vault-yield/common';
import type { DeliveryOutcome, DueDelivery } from '@vault-yield/store';
import {
  type AllowList,
  type Checked,
  checkDestination,
  type Resolve,
  type ResolvedAddress,
} from './address.js';
import { webhookHeaders } from './sign.js';

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

/** The retry schedule an outcome is drawn from (the deliverer's config). */
export interface Backoff {
  backoffBaseMs: number;
  backoffMaxMs: number;
}

/**
 * What an attempt's result does to its delivery at `now`: delivered, parked, or pending again
 * after the backoff (a `Retry-After` honoured up to its maximum) — parked once the delivery's
 * retry period is over; the last attempt falls on the deadline itself.
 */
export function outcomeOf(d: DueDelivery, r: AttemptResult, now: number, backoff: Backoff): DeliveryOutcome {
  if (r.kind === 'delivered') return { id: d.id, state: 'delivered', status: r.status, error: null };
  if (r.kind === 'park') return { id: d.id, state: 'parked', status: r.status, error: r.error };
  const deadline = d.deadline.getTime();
  if (now >= deadline)
    return { id: d.id, state: 'parked', status: r.status, error: `${r.error} (retry period over)` };
  const delay = Math.max(
    backoffDelay(d.attempts, backoff.backoffBaseMs, backoff.backoffMaxMs),
    Math.min(r.retryAfterMs ?? 0, backoff.backoffMaxMs),
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
