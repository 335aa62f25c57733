import pg from 'pg';
import { ident } from './index.js';

export interface ListenerOptions {
  url: string;
  applicationName: string;
  /** Channel to LISTEN on (an identifier: `[a-z_][a-z0-9_]*`). */
  channel: string;
  /** Each notification's payload, as it arrives. */
  onNotify(payload: string): void;
  /**
   * Called each time LISTEN is in force (at start and after every reconnection): notifications
   * sent while it was not were lost, so read what may have been missed here.
   */
  onListening(): void;
  /** The connection failed or was lost; it is made again after `retryInMs`. */
  onError?(err: unknown, retryInMs: number): void;
  connectTimeoutMs?: number;
  /** Reconnection backoff: doubling from minMs up to maxMs. */
  backoff?: { minMs: number; maxMs: number };
}

export interface Listener {
  /** True while LISTEN is in force. */
  readonly listening: boolean;
  /** Ends the connection; no reconnection after it. */
  close(): Promise<void>;
}

/**
 * ONE dedicated connection LISTENing on a channel (not taken from a pool: it is held for the
 * process's life), made again on error with backoff. TCP keep-alive finds a peer that vanished.
 */
export function createListener(o: ListenerOptions): Listener {
  const { minMs, maxMs } = o.backoff ?? { minMs: 250, maxMs: 10_000 };
  let closed = false;
  let listening = false;
  let client: pg.Client | null = null;
  let timer: NodeJS.Timeout | null = null;
  let delay = minMs;

  const retry = (err: unknown) => {
    listening = false;
    const c = client;
    client = null;
    c?.removeAllListeners('notification');
    c?.end().catch(() => {});
    if (closed || timer) return;
    o.onError?.(err, delay);
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, delay);
    timer.unref();
    delay = Math.min(maxMs, delay * 2);
  };

  const connect = async () => {
    if (closed) return;
    const c = new pg.Client({
      connectionString: o.url,
      application_name: o.applicationName,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      ...(o.connectTimeoutMs ? { connectionTimeoutMillis: o.connectTimeoutMs } : {}),
    });
    client = c;
    c.on('error', (err) => {
      if (client === c) retry(err);
    });
    c.on('end', () => {
      if (client === c && !closed) retry(new Error('listening connection ended'));
    });
    c.on('notification', (m) => {
      if (m.channel === o.channel) o.onNotify(m.payload ?? '');
    });
    try {
      await c.connect();
      await c.query(`listen ${ident(o.channel)}`);
      if (client !== c) return;
      if (closed) {
        await c.end().catch(() => {});
        return;
      }
      listening = true;
      delay = minMs;
      o.onListening();
    } catch (err) {
      if (client === c) retry(err);
    }
  };

  void connect();
  return {
    get listening() {
      return listening;
    },
    async close() {
      closed = true;
      listening = false;
      if (timer) clearTimeout(timer);
      timer = null;
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
