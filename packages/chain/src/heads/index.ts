import { createClient, webSocket } from 'viem';
import { watchBlockNumber } from 'viem/actions';

/**
 * New heads as the node announces them (`eth_subscribe newHeads` over WebSocket), so a follower
 * wakes when a block lands instead of on its next poll. Polling stays the floor: `wait` always
 * returns after its timeout, so a silent or broken subscription costs at most one poll interval,
 * and a follower without a WebSocket URL just sleeps.
 */
export interface HeadWatcher {
  /**
   * Resolves at the next announced head, after `ms`, or when `signal` aborts; at once when heads
   * were announced since the caller read `heads` as `since` (one that landed while the caller was
   * busy is not slept through).
   */
  wait(ms: number, signal: AbortSignal, since?: number): Promise<void>;
  /** 'subscribed' once the subscription delivered a head (until it fails), else 'polling'. */
  readonly mode: 'subscribed' | 'polling';
  /** Heads announced so far. */
  readonly heads: number;
  close(): Promise<void>;
}

export interface HeadWatcherConfig {
  /** ws:// or wss:// endpoint of the node; unset: polling only. */
  wsUrl?: string;
  /** Told once per change between subscribed and polling (with the error that caused a drop). */
  onModeChange?: (mode: 'subscribed' | 'polling', err?: unknown) => void;
}

export function createHeadWatcher(config: HeadWatcherConfig): HeadWatcher {
  let mode: 'subscribed' | 'polling' = 'polling';
  let heads = 0;
  let waiters: (() => void)[] = [];
  const setMode = (next: typeof mode, err?: unknown) => {
    if (next === mode) return;
    mode = next;
    config.onModeChange?.(next, err);
  };
  const wake = () => {
    const ready = waiters;
    waiters = [];
    for (const w of ready) w();
  };

  let closed = false;
  let stop: (() => void) | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let backoff = 1_000;
  /**
   * One socket and one subscription; when either fails, both are dropped and made again after a
   * backoff (1 s doubling to 30 s). viem's own reconnect is off: it logs to the console and leaves
   * the subscription to its caller anyway.
   */
  const connect = (url: string) => {
    if (closed) return;
    let dropped = false;
    const client = createClient({
      transport: webSocket(url, { reconnect: false, keepAlive: { interval: 10_000 } }),
    });
    const unwatch = watchBlockNumber(client, {
      poll: false,
      onBlockNumber: () => {
        backoff = 1_000;
        heads++;
        setMode('subscribed');
        wake();
      },
      onError: (err) => {
        if (dropped) return;
        dropped = true;
        setMode('polling', err);
        stop?.();
        if (!closed) retry = setTimeout(() => connect(url), backoff);
        backoff = Math.min(backoff * 2, 30_000);
      },
    });
    stop = () => {
      unwatch();
      client.transport
        .getRpcClient()
        .then((rpc) => rpc.close())
        .catch(() => {});
    };
  };
  if (config.wsUrl) connect(config.wsUrl);

  return {
    wait(ms, signal, since) {
      if (signal.aborted || (since !== undefined && heads > since)) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          waiters = waiters.filter((w) => w !== done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        signal.addEventListener('abort', done, { once: true });
        waiters.push(done);
      });
    },
    get mode() {
      return mode;
    },
    get heads() {
      return heads;
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      stop?.();
      wake();
    },
  };
}
