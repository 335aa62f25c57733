import type { Logger } from '@vault-yield/common';
import { activityTypes, parseVaultId } from '@vault-yield/domain';
import {
  type CommitNotice,
  createListener,
  type Listener,
  type Pool,
  type SnapshotJson,
  STREAM_CHANNEL,
  snapshotsOf,
  streamBounds,
  streamCommits,
  streamRows,
} from '@vault-yield/store';
import { createReplayBudget, type ReplayBudget } from './replay.js';

/**
 * The live streams' one source in a reader process: ONE dedicated Postgres connection LISTENs
 * for the projector's commit notifications (one per batch, sent inside its transaction, so
 * delivered after the commit) and fans them out in memory to every open stream. A notification
 * only wakes the hub, which reads the head from Postgres (anyone who may log in can NOTIFY: a
 * forged number must not move the head); which vaults it named only chooses the streams woken
 * once the head reaches it. Each stream reads the commits after its own cursor
 * from the tables (`commitsAfter`, shared by the streams that ask for the same page at once and
 * kept a little while), so a lost, late or compact notification never loses a row. On every
 * (re)connection of the listener, and every heartbeat, the head is read again (catch-up).
 */

/**
 * Which vaults a stream follows: `has` a vault id (`eip155:{chainId}:{address}`, as commits and
 * notices name vaults). A ReadonlySet of ids is one.
 */
export interface VaultFilter {
  has(vault: string): boolean;
}

const addressOf = (v: string) => v.slice(v.lastIndexOf(':') + 1);

/**
 * The filter of a stream naming `names`: vault ids (that vault) and bare addresses (the vaults at
 * that address on every chain). A bare address in a notice (a projector before migration 0028)
 * matches any name with that address (notices only make streams prompt).
 */
export function vaultFilter(names: readonly string[]): VaultFilter {
  const ids = new Set<string>();
  const addresses = new Set<string>();
  for (const n of names) (n.startsWith('eip155:') ? ids : addresses).add(n);
  const idAddresses = new Set([...ids].map(addressOf));
  return {
    has: (v) =>
      v.startsWith('eip155:')
        ? ids.has(v) || addresses.has(addressOf(v))
        : addresses.has(v) || idAddresses.has(v),
  };
}

/**
 * A commit as the streams send it: per vault (by vault id), the ids of its ledger rows a revert removed, its new
 * ledger rows (oldest first) and its snapshot.
 */
export interface LoadedCommit {
  seq: bigint;
  vaults: {
    /** The vault's id, `eip155:{chainId}:{address}`. */
    vault: string;
    retracted: string[];
    /** Its rows, or null when the commit is too large for a page: `count` of them, read with `rowsOf`. */
    rows: string[] | null;
    count: number;
    snapshot: SnapshotJson | null;
    /**
     * Its snapshot was left out of the page (the commit touched more vaults than a page's bytes
     * hold of their snapshots: it comes alone, the rest read in slices with `snapshotsOf`).
     */
    deferred?: true;
  }[];
}

export type WaitResult = 'advanced' | 'timeout' | 'closed';

export interface StreamHub {
  start(): void;
  /** Ends every stream (they see `closed`) and the listening connection. */
  stop(): Promise<void>;
  /** The highest commit number known to this process. */
  head(): bigint;
  /** Commits read per page at most (a shorter page: nothing more was visible, or `pageRows` or `pageBytes` reached). */
  readonly pageSize: number;
  /** Incremented when the head went backwards (the views switched to another schema). */
  epoch(): number;
  /** Reads the head and the oldest commit kept from Postgres (and wakes streams if it moved). */
  refresh(): Promise<{ head: bigint; oldest: bigint | null }>;
  /**
   * Whether a commit after `after` may concern a stream following `vaults` (null: all): by the
   * notifications' vault lists, true when unknown (a compact one, a catch-up, or older than the
   * notices kept). Only promptness rests on it: a stream also reads on every heartbeat.
   */
  relevant(after: bigint, vaults: VaultFilter | null): boolean;
  /** Resolves when a commit after `after` is `relevant`, after `timeoutMs`, or when the hub stops / `signal` aborts. */
  wait(
    after: bigint,
    timeoutMs: number,
    signal: AbortSignal,
    vaults: VaultFilter | null,
  ): Promise<WaitResult>;
  /** The next commits after `after` (at most a page), from the tables. */
  commitsAfter(after: bigint): Promise<LoadedCommit[]>;
  /**
   * Rows (at most `pageRows`, and `pageBytes` of them unless the first alone is more) of a vault in
   * a commit whose rows a page left out, from the `from`-th.
   */
  rowsOf(seq: bigint, vault: string, from: number): Promise<string[]>;
  /**
   * The snapshots of `vaults` (at most SNAPSHOTS_PER_READ: a slice of those a commit's page left
   * out), read now and shared by the streams that ask for the same slice.
   */
  snapshotsOf(seq: bigint, vaults: readonly string[]): Promise<Map<string, SnapshotJson>>;
  /** Ledger rows a page holds at most. */
  readonly pageRows: number;
  /** Bytes of ledger rows' JSON (UTF-8) a page holds at most (a slice: unless its first row alone is more). */
  readonly pageBytes: number;
  /** What the streams catching up behind the head may read together (STREAM_REPLAY_KIB_S). */
  readonly replay: ReplayBudget;
  /** A stream slot for `client`, or why there is none. */
  acquire(client: string): { release(): void } | { refused: 'total' | 'client'; limit: number };
  stats(): {
    streams: number;
    /** Streams refused since start, by the cap that refused them (STREAM_MAX, STREAM_MAX_PER_CLIENT). */
    refused: { total: number; client: number };
    clients: number;
    listening: boolean;
    waiting: number;
    /**
     * Pages (and slices of a large commit's rows) kept in memory and their bytes (rows' and
     * snapshots' JSON), at most `cacheBytes`; the largest read since start, in bytes.
     */
    cache: { pages: number; bytes: number; largest: number };
    /** The replay budget's charges (bytes, waits handed out in ms) and the streams waiting on it now. */
    replay: ReturnType<ReplayBudget['stats']>;
  };
}

/** Ledger rows a page holds at most (whole commits; a larger first one is read in slices). */
export const STREAM_PAGE_ROWS = 2_000;
/** Bytes of ledger rows' JSON a page holds at most (as rows: a larger first commit is read in slices). */
export const STREAM_PAGE_BYTES = 1024 * 1024;
/** Snapshots read at once for a page (a slice): a page stops before the commit that would take its snapshots past its bytes. */
export const SNAPSHOTS_PER_READ = 64;
/** Bytes of the pages kept in memory at most. */
export const STREAM_CACHE_BYTES = 64 * 1024 * 1024;

export interface StreamHubOptions {
  pool: Pool;
  databaseUrl: string;
  /** The schema the reader reads: a notification from it carries a commit number it can trust as a head. */
  schema: string;
  log: Logger;
  maxTotal: number;
  perClient: number;
  heartbeatMs: number;
  /** Commits read per page. */
  pageSize?: number;
  /** Ledger rows a page holds at most (STREAM_PAGE_ROWS). */
  pageRows?: number;
  /** Bytes of ledger rows' JSON a page holds at most (STREAM_PAGE_BYTES). */
  pageBytes?: number;
  /** Bytes of the pages kept after they were read (STREAM_CACHE_BYTES). */
  cacheBytes?: number;
  /** Notifications remembered (which vaults each commit touched), to wake only the streams concerned. */
  notices?: number;
  /** Bytes of JSON a second the streams catching up behind the head read together (0: unbounded). */
  replayBytesPerSecond?: number;
}

/** Bytes of JSON a second the streams catching up behind the head read together, by default. */
export const STREAM_REPLAY_BYTES_PER_SECOND = 1024 * 1024;

/** A page's size in memory, about: its rows' and snapshots' JSON (UTF-16: two bytes a character). */
const bytesOf = (page: readonly LoadedCommit[]): number => charsOf(page) * 2;

/** The characters of a page's JSON (rows, ids retracted, snapshots): what a stream reading it sends, about. */
export function charsOf(page: readonly LoadedCommit[]): number {
  let chars = 0;
  const snapshots = new Set<SnapshotJson>();
  for (const c of page)
    for (const v of c.vaults) {
      for (const r of v.rows ?? []) chars += r.length;
      for (const id of v.retracted) chars += id.length;
      if (v.snapshot) snapshots.add(v.snapshot);
    }
  for (const s of snapshots) chars += s.json.length;
  return chars;
}

export function createStreamHub(o: StreamHubOptions): StreamHub {
  const pageSize = o.pageSize ?? 100;
  const keep = o.notices ?? 4_096;
  /** The commits notified (or found by a catch-up: vaults null = unknown), ascending. */
  const notices: { seq: bigint; vaults: readonly string[] | null }[] = [];
  /** The head before the oldest notice kept: below it nothing is known. */
  let noticesFrom = 0n;
  const pageRows = o.pageRows ?? STREAM_PAGE_ROWS;
  const pageBytes = o.pageBytes ?? STREAM_PAGE_BYTES;
  const bounds = { rows: pageRows, bytes: pageBytes };
  const cacheBytes = o.cacheBytes ?? STREAM_CACHE_BYTES;
  const replay = createReplayBudget({
    bytesPerSecond: o.replayBytesPerSecond ?? STREAM_REPLAY_BYTES_PER_SECOND,
    // One page at once after a quiet while, or a second's worth if more.
    burstBytes: Math.max(pageBytes, o.replayBytesPerSecond ?? STREAM_REPLAY_BYTES_PER_SECOND),
  });
  let head = 0n;
  let epoch = 0;
  let stopped = false;
  let listener: Listener | null = null;
  let poll: NodeJS.Timeout | null = null;
  const waiters = new Set<{
    after: bigint;
    vaults: VaultFilter | null;
    done: (r: WaitResult) => void;
  }>();
  /** Pages read a moment ago (streams a little behind read them from memory), oldest first; bytes once read. */
  const pages = new Map<string, { page: Promise<unknown[]>; bytes: number }>();
  let cachedBytes = 0;
  let largest = 0;
  const forget = (key: string) => {
    const p = pages.get(key);
    if (!p) return;
    cachedBytes -= p.bytes;
    pages.delete(key);
  };
  const forgetAll = () => {
    pages.clear();
    cachedBytes = 0;
  };
  const clients = new Map<string, number>();
  let open = 0;
  /** Streams refused since start, by the cap that refused them. */
  const refused = { total: 0, client: 0 };

  const concerns = (touched: readonly string[] | null, vaults: VaultFilter | null) =>
    touched === null || vaults === null || touched.some((v) => vaults.has(v));

  const relevant = (after: bigint, vaults: VaultFilter | null): boolean => {
    if (after >= head) return false;
    if (vaults === null || after < noticesFrom) return true;
    for (let i = notices.length - 1; i >= 0; i--) {
      const n = notices[i]!;
      if (n.seq <= after) break;
      if (concerns(n.vaults, vaults)) return true;
    }
    return false;
  };

  const advance = (to: bigint, touched: readonly string[] | null) => {
    if (to <= head) return;
    notices.push({ seq: to, vaults: touched });
    if (notices.length > keep) noticesFrom = notices.splice(0, notices.length - keep).at(-1)!.seq;
    head = to;
    for (const w of waiters) if (w.after < head && concerns(touched, w.vaults)) w.done('advanced');
  };

  /**
   * What notifications said each commit above the head touched (null: not said), until the
   * database shows the commit. Anyone who may log in can NOTIFY the channel: a notification only
   * wakes the hub, which reads the head from the tables; its vault list is a hint for promptness.
   */
  const heard = new Map<bigint, readonly string[] | null>();

  const hear = (seq: bigint, vaults: readonly string[] | null) => {
    if (seq <= head) return;
    const had = heard.get(seq);
    // Two notices of one commit (one forged): wake the streams of both (past a few, all of them).
    const both = had === undefined ? vaults : had === null || vaults === null ? null : [...had, ...vaults];
    heard.set(seq, both && both.length <= 1_024 ? both : null);
    // Bounded: the lowest are the next to be confirmed; forged far-ahead ones go first.
    while (heard.size > keep) {
      let top = seq;
      for (const q of heard.keys()) if (q > top) top = q;
      heard.delete(top);
    }
  };

  /** The database's head `to`: the commits heard of up to it first (each wakes its streams), then the rest unknown. */
  const confirm = (to: bigint) => {
    const seqs = [...heard.keys()].filter((q) => q <= to).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const q of seqs) {
      advance(q, heard.get(q) ?? null);
      heard.delete(q);
    }
    advance(to, null);
  };

  const refresh = async () => {
    const b = await streamBounds(o.pool);
    const h = BigInt(b.head);
    if (h < head) {
      // The commits restarted (another schema behind the views): streams start again from it.
      o.log.warn({ was: head.toString(), now: h.toString() }, 'stream head went backwards; streams reset');
      head = h;
      epoch += 1;
      forgetAll();
      notices.length = 0;
      heard.clear();
      noticesFrom = h;
      for (const w of waiters) w.done('advanced');
    } else confirm(h);
    return { head: h, oldest: b.oldest === null ? null : BigInt(b.oldest) };
  };

  // One catch-up read at a time; asks made meanwhile are served by one more after it.
  let reading: Promise<unknown> | null = null;
  let again = false;
  const catchUp = (): void => {
    if (reading) {
      again = true;
      return;
    }
    reading = refresh()
      .catch((err: unknown) => o.log.warn({ err }, 'stream catch-up read failed'))
      .finally(() => {
        reading = null;
        if (again) {
          again = false;
          catchUp();
        }
      });
  };

  /**
   * A page: the commits after `after` within the page's rows and bytes (streamCommits), and their
   * vaults' snapshots — SNAPSHOTS_PER_READ at a time, the page stopping before the commit that
   * would take them past `pageBytes`; a first commit touching more keeps the rest of its
   * snapshots out (`deferred`: read in slices as its stream gets there).
   */
  const load = async (after: bigint): Promise<LoadedCommit[]> => {
    const all = await streamCommits(o.pool, after.toString(), pageSize, activityTypes, bounds);
    const snaps = new Map<string, SnapshotJson>();
    // (Commits name vault ids since migration 0028; anything else has no snapshot to read.)
    let chars = 0;
    const commits: typeof all = [];
    /** The first commit's vaults whose snapshots were left out. */
    let deferredFrom = Number.POSITIVE_INFINITY;
    for (const c of all) {
      const need = c.vaults.filter((v) => !snaps.has(v) && parseVaultId(v) !== null);
      let stop = false;
      for (let k = 0; k < need.length; k += SNAPSHOTS_PER_READ) {
        if (chars * 2 > pageBytes) {
          if (commits.length === 0) deferredFrom = c.vaults.indexOf(need[k]!);
          else stop = true;
          break;
        }
        for (const [v, snap] of await snapshotsOf(o.pool, need.slice(k, k + SNAPSHOTS_PER_READ))) {
          snaps.set(v, snap);
          chars += snap.json.length;
        }
      }
      if (stop) break;
      commits.push(c);
      if (deferredFrom !== Number.POSITIVE_INFINITY) break;
    }
    return commits.map((c) => {
      const rows = new Map<string, string[]>();
      for (const r of c.rows) {
        const list = rows.get(r.vault);
        if (list) list.push(r.json);
        else rows.set(r.vault, [r.json]);
      }
      // A row id begins with its chain and ends with its vault (chainId:blockHash:txHash:logIndex:vault).
      const retracted = new Map<string, string[]>();
      for (const id of c.retracted) {
        const vault = `eip155:${id.slice(0, id.indexOf(':'))}:${id.slice(id.lastIndexOf(':') + 1)}`;
        const list = retracted.get(vault);
        if (list) list.push(id);
        else retracted.set(vault, [id]);
      }
      return {
        seq: BigInt(c.seq),
        vaults: c.vaults.map((vault, i) => ({
          vault,
          retracted: retracted.get(vault) ?? [],
          rows: c.counts ? null : (rows.get(vault) ?? []),
          count: c.counts ? (c.counts.get(vault) ?? 0) : (rows.get(vault)?.length ?? 0),
          snapshot: snaps.get(vault) ?? null,
          ...(i >= deferredFrom && !snaps.has(vault) ? { deferred: true as const } : {}),
        })),
      };
    });
  };

  /** A read shared by the streams that ask for it at once, kept a while (by its bytes) once done. */
  const cached = <T extends unknown[]>(key: string, read: () => Promise<T>, size: (v: T) => number) => {
    const kept = pages.get(key);
    if (kept) return kept.page as Promise<T>;
    const entry = { page: read() as Promise<unknown[]>, bytes: 0 };
    pages.set(key, entry);
    // An empty answer or a failed read is not kept: the next ask reads again. A read answer is
    // counted by its bytes; the oldest go first past `cacheBytes` (one larger than it, at once).
    entry.page.then(
      (p) => {
        if (pages.get(key) !== entry) return;
        if (p.length === 0) return forget(key);
        entry.bytes = size(p as T);
        largest = Math.max(largest, entry.bytes);
        cachedBytes += entry.bytes;
        for (const k of pages.keys()) {
          if (cachedBytes <= cacheBytes) break;
          forget(k);
        }
      },
      () => {
        if (pages.get(key) === entry) forget(key);
      },
    );
    return entry.page as Promise<T>;
  };

  return {
    start() {
      listener = createListener({
        url: o.databaseUrl,
        applicationName: 'vault-yield-reader-listen',
        channel: STREAM_CHANNEL,
        onNotify(payload) {
          // Whatever it says, the head is read from the tables (a notification may be forged).
          // Another schema's commit (a rebuild's, or the one behind a views schema) gives no hint:
          // its number is not ours.
          try {
            const n = JSON.parse(payload) as CommitNotice;
            if (n.schema === o.schema && typeof n.seq === 'string' && /^\d{1,19}$/.test(n.seq))
              hear(
                BigInt(n.seq),
                Array.isArray(n.vaults) && n.vaults.every((v) => typeof v === 'string') ? n.vaults : null,
              );
          } catch {
            // not JSON: a wake-up all the same
          }
          catchUp();
        },
        onListening() {
          o.log.info('listening for projection commits');
          catchUp();
        },
        onError(err, retryInMs) {
          o.log.warn(
            { err: { message: (err as Error).message }, retryInMs },
            'stream listener lost its connection',
          );
        },
      });
      // The safety net: a notification is never needed for correctness, only for promptness.
      poll = setInterval(catchUp, o.heartbeatMs);
      poll.unref();
    },
    async stop() {
      stopped = true;
      if (poll) clearInterval(poll);
      for (const w of waiters) w.done('closed');
      await listener?.close();
    },
    head: () => head,
    pageSize,
    epoch: () => epoch,
    refresh,
    relevant,
    wait(after, timeoutMs, signal, vaults) {
      if (stopped || signal.aborted) return Promise.resolve('closed');
      if (relevant(after, vaults)) return Promise.resolve('advanced');
      return new Promise((resolve) => {
        const w = {
          after,
          vaults,
          done: (r: WaitResult) => {
            clearTimeout(timer);
            signal.removeEventListener('abort', onAbort);
            waiters.delete(w);
            resolve(r);
          },
        };
        const onAbort = () => w.done('closed');
        const timer = setTimeout(() => w.done('timeout'), timeoutMs);
        signal.addEventListener('abort', onAbort);
        waiters.add(w);
      });
    },
    commitsAfter: (after) => cached(`${epoch}:${after}`, () => load(after), bytesOf),
    rowsOf: (seq, vault, from) =>
      cached(
        `${epoch}:${seq}:${vault}:${from}`,
        () => streamRows(o.pool, seq.toString(), vault, from, bounds, activityTypes),
        (rows) => rows.reduce((n, r) => n + r.length * 2, 0),
      ),
    snapshotsOf: (seq, vaults) =>
      cached(
        `${epoch}:${seq}:snapshots:${vaults[0] ?? ''}:${vaults.length}`,
        async () => [
          ...(await snapshotsOf(
            o.pool,
            vaults.filter((v) => parseVaultId(v) !== null),
          )),
        ],
        (got) => got.reduce((n, [, s]) => n + s.json.length * 2, 0),
      ).then((got) => new Map(got)),
    pageRows,
    pageBytes,
    replay,

    acquire(client) {
      if (open >= o.maxTotal) {
        refused.total++;
        return { refused: 'total', limit: o.maxTotal };
      }
      const mine = clients.get(client) ?? 0;
      if (mine >= o.perClient) {
        refused.client++;
        return { refused: 'client', limit: o.perClient };
      }
      open += 1;
      clients.set(client, mine + 1);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          open -= 1;
          const n = (clients.get(client) ?? 1) - 1;
          if (n <= 0) clients.delete(client);
          else clients.set(client, n);
        },
      };
    },
    stats: () => ({
      streams: open,
      refused: { ...refused },
      clients: clients.size,
      listening: listener?.listening ?? false,
      waiting: waiters.size,
      cache: { pages: pages.size, bytes: cachedBytes, largest },
      replay: replay.stats(),
    }),
  };
}
