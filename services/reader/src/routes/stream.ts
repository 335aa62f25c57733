import { setTimeout as sleep } from 'node:timers/promises';
import type { HttpBindings } from '@hono/node-server';
import { OpenAPIHono } from '@hono/zod-openapi';
import { parseVaultId, vaultIdOf } from '@vault-yield/domain';
import { type SnapshotJson, snapshotsMatching } from '@vault-yield/store';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { ambiguousVault, badRequest, errorResponse, notFound } from '../errors.js';
import { routes } from '../openapi/routes.js';
import { encodeStreamCursor, parseStreamCursor, type StreamCursor } from '../params.js';
import {
  charsOf,
  type LoadedCommit,
  SNAPSHOTS_PER_READ,
  type StreamHub,
  type VaultFilter,
  vaultFilter,
} from '../stream/hub.js';
import { createTimedWriter, type StreamOut } from '../stream/writer.js';
import { validationHook } from './declare.js';
import type { RouteDeps } from './deps.js';
import { resolveVault } from './vault.js';

/** Seconds a refused stream is told to wait (Retry-After). */
const RETRY_AFTER_S = 5;
/** The reconnection delay the stream asks EventSource clients for (SSE `retry:`), ms. */
const RECONNECT_MS = 2_000;

interface Event {
  event: 'snapshot' | 'ledger' | 'retract';
  data: string;
}

/** The answer to a request whose client left before its stream opened (no one reads it). */
const gone = (c: Context) => c.body(null, 499 as never);

/** `{ id, chainId, vault, etag, snapshot }`: the snapshot with the ETag GET snapshot gives it. */
const snapshotData = (s: SnapshotJson) =>
  `{"id":${JSON.stringify(s.id)},"chainId":${s.chainId},"vault":${JSON.stringify(s.vault)},"etag":${JSON.stringify(`"${s.etag}"`)},"snapshot":${s.json}}`;

/** `{ id, chainId, vault, ids }`: the rows of the vault `id` a revert removed. */
const retractData = (id: string, ids: readonly string[]) => {
  const ref = parseVaultId(id);
  return JSON.stringify(ref ? { id, chainId: ref.chainId, vault: ref.vault, ids } : { vault: id, ids });
};

/**
 * The snapshots of the vaults a stream names (ids and bare addresses: a bare address, its vault
 * on every chain), in the order named (a bare address's by ascending chain), each vault once.
 */
async function namedSnapshots(pool: RouteDeps['pool'], names: readonly string[]): Promise<SnapshotJson[]> {
  const rows = await snapshotsMatching(
    pool,
    names.filter((n) => n.startsWith('eip155:')),
    names.filter((n) => !n.startsWith('eip155:')),
  );
  const out = new Map<string, SnapshotJson>();
  for (const n of names)
    for (const r of rows.filter((r) => r.id === n || r.vault === n).sort((a, b) => a.chainId - b.chainId))
      if (!out.has(r.id)) out.set(r.id, r);
  return [...out.values()];
}

/**
 * A commit's events for a stream following `vaults` (null: all), from the `skip`-th, each with its
 * position (1-based): per vault the rows a revert removed (`retract`, `{ vault, ids }`), its new
 * rows, then its snapshot. Rows a page left out (a large commit) are read in slices as they go;
 * snapshots a page left out (a commit touching many vaults) too, SNAPSHOTS_PER_READ at a time in
 * fixed slices of the commit's (shared by every stream reading them).
 */
async function* eventsOf(
  commit: LoadedCommit,
  vaults: VaultFilter | null,
  skip: number,
  slice: (vault: string, from: number) => Promise<string[]>,
  later: (vaults: readonly string[]) => Promise<ReadonlyMap<string, SnapshotJson>>,
): AsyncGenerator<{ pos: number; e: Event }> {
  const deferred = commit.vaults.filter((v) => v.deferred).map((v) => v.vault);
  const sliceOf = new Map(deferred.map((v, k) => [v, Math.floor(k / SNAPSHOTS_PER_READ)]));
  let read = -1;
  let got: ReadonlyMap<string, SnapshotJson> = new Map();
  let i = 0;
  for (const v of commit.vaults) {
    if (vaults && !vaults.has(v.vault)) continue;
    if (v.retracted.length > 0) {
      if (i >= skip)
        yield {
          pos: i + 1,
          e: { event: 'retract', data: retractData(v.vault, v.retracted) },
        };
      i += 1;
    }
    if (v.rows) {
      for (const data of v.rows) {
        if (i >= skip) yield { pos: i + 1, e: { event: 'ledger', data } };
        i += 1;
      }
    } else {
      for (let k = Math.max(0, skip - i); k < v.count; ) {
        const rows = await slice(v.vault, k);
        if (rows.length === 0) break; // (deleted by a revert since they were counted)
        for (const data of rows) {
          k += 1;
          yield { pos: i + k, e: { event: 'ledger', data } };
        }
      }
      i += v.count;
    }
    let snapshot = v.snapshot;
    if (v.deferred) {
      const k = sliceOf.get(v.vault)!;
      if (k !== read) {
        got = await later(deferred.slice(k * SNAPSHOTS_PER_READ, (k + 1) * SNAPSHOTS_PER_READ));
        read = k;
      }
      snapshot = got.get(v.vault) ?? null;
    }
    if (snapshot) {
      if (i >= skip)
        yield {
          pos: i + 1,
          e: { event: 'snapshot', data: snapshotData(snapshot) },
        };
      i += 1;
    }
  }
}

export interface StreamDeps {
  hub: StreamHub;
  /** The client key of the rate limit (middleware/client-address.ts): streams are capped per client. */
  clientKey: (c: Context) => string;
  /** Runs a stream's read in one of its client's request slots (middleware/concurrency.ts). */
  withSlot: <T>(client: string, read: () => Promise<T>) => Promise<T>;
}

/** The stream's answer to HEAD: its headers, no body, no stream opened (a slot is never taken). */
const headOnly = (c: Context) =>
  c.body(null, 200, {
    'Content-Type': 'text/event-stream',
    'Cache-Control': 'no-store',
    'X-Accel-Buffering': 'no',
  });

/**
 * Ends the connection under a stream (its client stopped reading: the socket would otherwise wait
 * for a drain that never comes). Served by Node (`@hono/node-server`): its response is `c.env`.
 */
const cutConnection = (c: Context) => (c.env as Partial<HttpBindings> | undefined)?.outgoing?.destroy();

/**
 * GET /v1/vault/{address}/stream and GET /v1/stream: server-sent events after each projection
 * commit — the vault's new ledger rows (oldest first), then its snapshot — each with the stream's
 * cursor as `id`, so a reconnection with `Last-Event-ID` goes on after the last event received.
 *
 * A slot (hub.acquire) is released on every path: the request's signal (aborted when its socket
 * closes) is checked after every await before the stream exists and ends the stream after; a
 * write the client has not taken within `writeTimeoutMs` closes the stream and its connection.
 * HEAD answers the headers alone.
 */
export function streamRoutes({ pool, config, log }: RouteDeps, { hub, clientKey, withSlot }: StreamDeps) {
  const { heartbeatMs, writeTimeoutMs } = config.streams;

  /**
   * A stream of `vaults` (vault ids, or bare addresses: the vaults at that address on every
   * chain; null: every vault). `single`: the one vault of GET /v1/vault/{vault}/stream (404 when
   * it has no snapshot; a bare address names it on the one chain that has it, 409 on several).
   */
  const open = async (c: Context, named: string[] | null, single: boolean): Promise<Response> => {
    let vaults = named;
    const lastId = c.req.header('last-event-id');
    let cursor: StreamCursor | null = null;
    if (lastId !== undefined && lastId !== '') {
      cursor = parseStreamCursor(lastId);
      if (!cursor)
        throw badRequest('header.last-event-id: invalid stream cursor: send back an event id unchanged');
    }
    // Hono runs GET's handler for HEAD and drops the body: a stream opened here would never be read.
    if (c.req.method === 'HEAD') return headOnly(c);
    const signal = c.req.raw.signal;
    if (signal.aborted) return gone(c);
    const client = clientKey(c);
    const lease = hub.acquire(client);
    if ('refused' in lease) {
      const message =
        lease.refused === 'total'
          ? `too many live streams open on this reader (at most ${lease.limit}); retry in ${RETRY_AFTER_S}s or poll`
          : `too many live streams open by this client (at most ${lease.limit}); retry in ${RETRY_AFTER_S}s or poll`;
      return errorResponse(c, 503, 'unavailable', message, { 'Retry-After': String(RETRY_AFTER_S) });
    }
    /** Set once the stream owns the lease (it releases it when it ends). */
    let handedOver = false;
    try {
      let initial: Event[] = [];
      let reset: string | null = null;
      const bounds = await hub.refresh();
      if (signal.aborted) return gone(c);
      if (
        cursor &&
        (cursor.seq > bounds.head || (bounds.oldest !== null && cursor.seq < bounds.oldest - 1n))
      ) {
        reset =
          cursor.seq > bounds.head
            ? 'the cursor is ahead of this reader’s commits (another projection schema): start again from the API'
            : 'the cursor is older than the commits kept: start again from the API';
        cursor = null;
      }
      const start = cursor ?? { seq: bounds.head, pos: 0 };
      // A new stream of named vaults starts with their snapshots (a resumed one needs none).
      // (A reset sends them after it.)
      // The one vault of a bare address: read with its snapshot (a resumed stream reads it alone).
      const bare = single && vaults?.[0] !== undefined && !vaults[0].startsWith('eip155:') ? vaults[0] : null;
      if (bare !== null && cursor) {
        vaults = [vaultIdOf((await resolveVault(pool, { address: bare })).ref)];
        if (signal.aborted) return gone(c);
      }
      if (!cursor && vaults) {
        const snaps = await namedSnapshots(pool, vaults);
        if (signal.aborted) return gone(c);
        if (single && snaps.length === 0) throw notFound(`vault ${vaults[0]} not found`);
        if (single && snaps.length > 1)
          throw ambiguousVault(
            vaults[0]!,
            snaps.map((x) => x.id),
          );
        if (single) vaults = [snaps[0]!.id];
        if (!reset) initial = snaps.map((s) => ({ event: 'snapshot' as const, data: snapshotData(s) }));
      }
      const filter = vaults ? vaultFilter(vaults) : null;
      c.header('X-Accel-Buffering', 'no');
      const res = streamSSE(c, async (stream) => {
        const ac = new AbortController();
        const end = () => {
          ac.abort();
          // Fails the write in progress (it may wait for a drain that never comes).
          stream.abort();
        };
        stream.onAbort(() => ac.abort());
        signal.addEventListener('abort', end);
        if (signal.aborted) end();
        const out = createTimedWriter(stream, ac.signal, writeTimeoutMs, () => {
          log.info({ writeTimeoutMs }, 'live stream closed: its client took no write in time');
          end();
          cutConnection(c);
        });
        try {
          await run(out, ac.signal, start, initial, reset, filter, vaults, (read) => withSlot(client, read));
        } catch (err) {
          // Never thrown to Hono: it would send the error's text to the client as an event.
          log.warn({ err: { message: (err as Error).message } }, 'live stream failed; closed');
        } finally {
          signal.removeEventListener('abort', end);
          lease.release();
        }
      });
      handedOver = true;
      res.headers.set('Cache-Control', 'no-store');
      return res;
    } finally {
      if (!handedOver) lease.release();
    }
  };

  const run = async (
    out: StreamOut,
    signal: AbortSignal,
    start: StreamCursor,
    initial: Event[],
    firstReset: string | null,
    filter: VaultFilter | null,
    vaults: string[] | null,
    /** Runs a read of Postgres in one of the client's slots. */
    capped: <T>(read: () => Promise<T>) => Promise<T>,
  ) => {
    let cursor = start;
    let epoch = hub.epoch();
    await out.write(`retry: ${RECONNECT_MS}\n\n`);
    const startOver = async (reason: string) => {
      const { head } = await capped(() => hub.refresh());
      const id = encodeStreamCursor({ seq: head, pos: 0 });
      // Read before anything is sent: a failed read is tried again with nothing sent twice.
      const snaps = vaults ? await capped(() => namedSnapshots(pool, vaults)) : [];
      cursor = { seq: head, pos: 0 };
      await out.event({ id, event: 'reset', data: JSON.stringify({ reason, cursor: id }) });
      for (const s of snaps) await out.event({ id, event: 'snapshot', data: snapshotData(s) });
    };
    for (const e of initial) await out.event({ id: encodeStreamCursor(cursor), ...e });

    /**
     * Whether this stream reads behind the head (a replay): its last page did not reach the head,
     * or it opens more than a page of commits behind it. Its reads then take turns in the replay
     * budget (STREAM_REPLAY_KIB_S), a keep-alive every heartbeat while it waits; a stream at the
     * head reads at once.
     */
    let behind = hub.head() - cursor.seq > BigInt(hub.pageSize);
    /** What its next read behind the head is expected to hold (its last one's characters). */
    let expected = hub.pageBytes;
    /** A read behind the head, in its turn; null when the stream ended while it waited (nothing read). */
    const readBehind = async <T>(read: () => Promise<T>, size: (v: T) => number): Promise<T | null> => {
      const turn = hub.replay.turn(expected);
      let chars = 0;
      try {
        if (turn.wait > 0) await hold(turn.wait);
        if (signal.aborted) return null;
        const v = await read();
        chars = size(v);
        expected = Math.max(1, chars);
        return v;
      } finally {
        // What was read (0: given up, the reservation goes back).
        turn.settle(chars);
      }
    };
    const hold = async (ms: number) => {
      const done = hub.replay.waiting();
      try {
        let wait = ms;
        while (wait > 0 && !signal.aborted) {
          const step = Math.min(wait, heartbeatMs);
          await sleep(step, undefined, { signal }).catch(() => undefined);
          wait -= step;
          if (wait > 0 && !signal.aborted) await out.write(': keep-alive\n\n');
        }
      } finally {
        done();
      }
    };
    const rowChars = (rows: readonly string[]) => rows.reduce((n, r) => n + r.length, 0);
    const snapshotChars = (snaps: ReadonlyMap<string, SnapshotJson>) => {
      let n = 0;
      for (const s of snaps.values()) n += s.json.length;
      return n;
    };

    /** A reset still to send (its reason): a resume that could not go on, or a rebuild. */
    let pendingReset = firstReset;
    /** Every commit up to `checked` that concerns this stream has been read (the cursor may lag). */
    let checked = cursor.seq;
    /** Read from the cursor whatever the notifications said (after a heartbeat's silence). */
    let force = false;
    while (!signal.aborted) {
      try {
        if (hub.epoch() !== epoch) {
          epoch = hub.epoch();
          pendingReset = 'the projection behind this reader changed (rebuild): start again from the API';
        }
        if (pendingReset) {
          await startOver(pendingReset);
          pendingReset = null;
          checked = cursor.seq;
          // Started again at the head: no replay.
          behind = false;
          continue;
        }
        const head = hub.head();
        if (cursor.pos > 0 || (head > cursor.seq && (force || hub.relevant(checked, filter)))) {
          force = false;
          const after = cursor.pos > 0 ? cursor.seq - 1n : cursor.seq;
          const page = () => capped(() => hub.commitsAfter(after));
          const commits = behind ? ((await readBehind(page, charsOf)) ?? []) : await page();
          if (commits.length === 0 && cursor.pos > 0) cursor = { seq: cursor.seq, pos: 0 };
          for (const commit of commits) {
            if (signal.aborted) break;
            const skip = commit.seq === cursor.seq ? cursor.pos : 0;
            // The rows of a commit too large for a page, read in slices: behind the head, each
            // slice takes its turn too.
            const slice = (vault: string, from: number) => {
              const rows = () => capped(() => hub.rowsOf(commit.seq, vault, from));
              return commit.seq < hub.head() ? readBehind(rows, rowChars).then((r) => r ?? []) : rows();
            };
            // Its snapshots a page left out, a slice at a time: behind the head, in turns too.
            const later = (vs: readonly string[]) => {
              const snaps = () => capped(() => hub.snapshotsOf(commit.seq, vs));
              return commit.seq < hub.head()
                ? readBehind(snaps, snapshotChars).then((m) => m ?? new Map<string, SnapshotJson>())
                : snaps();
            };
            for await (const { pos, e } of eventsOf(commit, filter, skip, slice, later)) {
              if (signal.aborted) break;
              await out.event({ id: encodeStreamCursor({ seq: commit.seq, pos }), ...e });
              // (a failed slice read goes on from here)
              cursor = { seq: commit.seq, pos };
            }
            if (signal.aborted) break;
            cursor = { seq: commit.seq, pos: 0 };
          }
          const last = commits.at(-1);
          behind = last !== undefined && last.seq < hub.head();
          // Read up to the cursor (a page may be one read a moment ago, shorter than what is
          // visible now: the notices then say so, and the next turn reads on from the cursor).
          if (commits.length === 0 && cursor.pos === 0 && head > checked) checked = head;
          else if (cursor.seq > checked) checked = cursor.seq;
          continue;
        }
        // Commits of other vaults only: nothing to read now (the cursor moves on at the next read).
        if (head > checked) checked = head;
        const woke = await hub.wait(checked, heartbeatMs, signal, filter);
        if (woke === 'closed') break;
        if (woke === 'timeout') {
          await out.write(': keep-alive\n\n');
          force = true;
        }
      } catch (err) {
        // Postgres unreachable: the stream stays open and tries again (its cursor is unchanged);
        // the client is told nothing of the error (its text stays in the log).
        log.warn({ err: { message: (err as Error).message } }, 'live stream read failed; retrying');
        if ((await hub.wait(2n ** 63n, 1_000, signal, filter)) === 'closed') break;
      }
    }
  };

  return new OpenAPIHono({ defaultHook: validationHook })
    .openapi(routes.vaultStream, async (c) => {
      const name = c.req.valid('param').vault;
      // A bare address names one vault here, as GET snapshot (404 on none, 409 on several: read
      // with its snapshot in open()); a HEAD checks the parameters only.
      return (await open(c, ['id' in name ? name.id : name.address], true)) as never;
    })
    .openapi(routes.stream, async (c) => {
      const q = c.req.valid('query');
      return (await open(c, q.vault && q.vault.length > 0 ? q.vault : null, false)) as never;
    });
}
