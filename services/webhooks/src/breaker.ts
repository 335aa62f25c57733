import type { Logger } from '@vault-yield/common';
import type { AttemptResult } from './attempt.js';

/** What the endpoints' breakers are drawn from (the deliverer's config). */
export interface BreakerConfig {
  endpointConcurrency: number;
  breakerFailures: number;
  breakerFailingMs: number;
  breakerProbeMs: number;
}

/**
 * Per endpoint, a circuit breaker and its share of the sends. A paused endpoint (its breaker open)
 * is sent nothing but one probe at a time, every `breakerProbeMs`; a probe answered resumes it, a
 * failed one pauses it again. In memory: a restarted deliverer starts with every endpoint closed.
 */
export interface Breakers {
  /** The breaker after an attempt sent at `sentAt` (a failure counts, any answer resets it). */
  after(endpointId: number, r: AttemptResult, sentAt: number): void;
  /** How many more sends `endpointId` may take now (its in-flight cap, its breaker). */
  room(endpointId: number, inFlightOf: Map<number, number>, now: number): number;
  /** A send to `endpointId` starts: a paused endpoint's is its probe. */
  sending(endpointId: number): void;
  /** Endpoints paused now. */
  paused(): number[];
  /** Endpoints failing or paused. */
  readonly size: number;
  /** Drops `endpointId`'s breaker (the endpoint was disabled). */
  forget(endpointId: number): void;
}

interface Breaker {
  failures: number;
  failingSince: number | null;
  pausedUntil: number | null;
  probing: boolean;
}

/** `pausedGauge` is set to the number of paused endpoints after every attempt. */
export function createBreakers(
  config: BreakerConfig,
  log: Pick<Logger, 'info' | 'warn'>,
  pausedGauge: { set(n: number): void },
): Breakers {
  /** Per endpoint, its failed attempts in a row, since when it fails and, when paused, until when. */
  const breakers = new Map<number, Breaker>();
  /** When each endpoint last answered (anything but a failure): a failure sent before it does not date its streak. */
  const answeredAt = new Map<number, number>();

  /**
   * It opens after `breakerFailures` failures in a row, or when the endpoint has failed for
   * `breakerFailingMs` (from the first failed attempt's sending, none answered since) whatever the
   * count: an endpoint whose attempts each hang until the time-out reaches the count slowly.
   */
  function after(endpointId: number, r: AttemptResult, sentAt: number): void {
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
    pausedGauge.set([...breakers.values()].filter((x) => x.pausedUntil !== null).length);
  }

  function room(endpointId: number, inFlightOf: Map<number, number>, now: number): number {
    const b = breakers.get(endpointId);
    if (b?.pausedUntil != null) {
      if (b.probing || now < b.pausedUntil) return 0;
      return (inFlightOf.get(endpointId) ?? 0) === 0 ? 1 : 0;
    }
    return config.endpointConcurrency - (inFlightOf.get(endpointId) ?? 0);
  }

  return {
    after,
    room,
    sending(endpointId) {
      const b = breakers.get(endpointId);
      if (b?.pausedUntil != null) b.probing = true;
    },
    paused: () => [...breakers].filter(([, b]) => b.pausedUntil !== null).map(([id]) => id),
    get size() {
      return breakers.size;
    },
    forget(endpointId) {
      breakers.delete(endpointId);
    },
  };
}
