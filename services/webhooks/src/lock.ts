import {
  holdsWebhookLock,
  type Pool,
  type PoolClient,
  releaseWebhookLock,
  tryWebhookLock,
} from '@vault-yield/store';

/** How often the lock's session is asked whether it still holds the lock (besides its end event). */
const LOCK_CHECK_MS = 1_000;

/** The lock's session ended or no longer holds the lock: the deliverer stops sending and takes it again. */
export class LockLost extends Error {
  constructor() {
    super('the deliverer lock was lost (its database session ended)');
  }
}

/**
 * The deliverer lock (one deliverer per webhooks schema sends; others wait their turn) and the
 * session that holds it: a connection of `pool` kept for as long as the deliverer sends. Its end
 * (Postgres restarting, the session killed) is noticed at once, and calls `onLost`.
 */
export interface DelivererLock {
  /** One try on a connection of its own: true when it holds the lock now; a database error throws. */
  take(): Promise<boolean>;
  /** Throws LockLost unless the session is there and holds the lock (asked once a second). */
  check(): Promise<void>;
  /** The session ended or no longer holds the lock. */
  readonly lost: boolean;
  /** Lets the lock go: unlocked on a live session, a lost or failing session discarded. */
  release(): Promise<void>;
}

export function createDelivererLock(pool: Pool, schema: string, onLost: () => void): DelivererLock {
  let client: PoolClient | undefined;
  let unwatch: () => void = () => {};
  let lost = false;
  let checkedAt = 0;

  function hold(c: PoolClient): void {
    client = c;
    lost = false;
    checkedAt = Date.now();
    const ended = () => {
      if (client !== c) return;
      lost = true;
      onLost();
    };
    c.on('error', ended);
    c.on('end', ended);
    unwatch = () => {
      c.off('error', ended);
      c.off('end', ended);
    };
  }

  return {
    get lost() {
      return lost;
    },
    async take() {
      const c = await pool.connect();
      let ok = false;
      try {
        ok = await tryWebhookLock(c, schema);
      } catch (err) {
        c.release(true);
        throw err;
      }
      if (ok) hold(c);
      else c.release();
      return ok;
    },
    async check() {
      if (lost || !client) throw new LockLost();
      if (Date.now() - checkedAt < LOCK_CHECK_MS) return;
      // A session whose server answers nothing fails at the pool's query time-out: lost too.
      if (!(await holdsWebhookLock(client).catch(() => false))) {
        lost = true;
        throw new LockLost();
      }
      checkedAt = Date.now();
    },
    async release() {
      const c = client;
      client = undefined;
      if (!c) return;
      unwatch();
      const unlocked =
        !lost &&
        (await releaseWebhookLock(c).then(
          () => true,
          () => false,
        ));
      c.release(!unlocked);
    },
  };
}
