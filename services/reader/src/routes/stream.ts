import { OpenAPIHono } from '@hono/zod-openapi';
import { snapshotsOf } from '@vault-yield/store';
import type { Context } from 'hono';
import { type SSEStreamingApi, streamSSE } from 'hono/streaming';
import { badRequest, errorResponse, notFound } from '../errors.js';
import { routes } from '../openapi/routes.js';
import { encodeStreamCursor, parseStreamCursor, type StreamCursor } from '../params.js';
import type { LoadedCommit, StreamHub } from '../stream/hub.js';
import { validationHook } from './declare.js';
import type { RouteDeps } from './deps.js';

/** Seconds a refused stream is told to wait (Retry-After). */
const RETRY_AFTER_S = 5;
/** The reconnection delay the stream asks EventSource clients for (SSE `retry:`), ms. */
const RECONNECT_MS = 2_000;

interface Event {
  event: 'snapshot' | 'ledger' | 'retract';
  data: string;
}

/** `{ vault, etag, snapshot }`: the snapshot with the ETag GET snapshot gives it. */
const snapshotData = (vault: string, etag: string, json: string) =>
  `{"vault":${JSON.stringify(vault)},"etag":${JSON.stringify(`"${etag}"`)},"snapshot":${json}}`;

/**
 * A commit's events for a stream following `vaults` (null: all): per vault the rows a revert
 * removed (`retract`, `{ vault, ids }`), its new rows, then its snapshot.
 */
function eventsOf(commit: LoadedCommit, vaults: ReadonlySet<string> | null): Event[] {
  const out: Event[] = [];
  for (const v of commit.vaults) {
    if (vaults && !vaults.has(v.vault)) continue;
    if (v.retracted.length > 0)
      out.push({ event: 'retract', data: JSON.stringify({ vault: v.vault, ids: v.retracted }) });
    for (const data of v.rows) out.push({ event: 'ledger', data });
    if (v.snapshot)
      out.push({ event: 'snapshot', data: snapshotData(v.vault, v.snapshot.etag, v.snapshot.json) });
  }
  return out;
}

export interface StreamDeps {
  hub: StreamHub;
  /** The client key of the rate limit (middleware/client-address.ts): streams are capped per client. */
  clientKey: (c: Context) => string;
}

/**
 * GET /v1/vault/{address}/stream and GET /v1/stream: server-sent events after each projection
 * commit — the vault's new ledger rows (oldest first), then its snapshot — each with the stream's
 * cursor as `id`, so a reconnection with `Last-Event-ID` goes on after the last event received.
 */
export function streamRoutes({ pool, config, log }: RouteDeps, { hub, clientKey }: StreamDeps) {
  const { heartbeatMs } = config.streams;

  const open = async (c: Context, vaults: string[] | null, single: boolean): Promise<Response> => {
    const lastId = c.req.header('last-event-id');
    let cursor: StreamCursor | null = null;
    if (lastId !== undefined && lastId !== '') {
      cursor = parseStreamCursor(lastId);
      if (!cursor)
        throw badRequest('header.last-event-id: invalid stream cursor: send back an event id unchanged');
    }
    const lease = hub.acquire(clientKey(c));
    if ('refused' in lease) {
      const message =
        lease.refused === 'total'
          ? `too many live streams open on this reader (at most ${lease.limit}); retry in ${RETRY_AFTER_S}s or poll`
          : `too many live streams open by this client (at most ${lease.limit}); retry in ${RETRY_AFTER_S}s or poll`;
      return errorResponse(c, 503, 'unavailable', message, { 'Retry-After': String(RETRY_AFTER_S) });
    }
    let initial: Event[] = [];
    let reset: string | null = null;
    let start: StreamCursor;
    try {
      const bounds = await hub.refresh();
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
      start = cursor ?? { seq: bounds.head, pos: 0 };
      // A new stream of named vaults starts with their snapshots (a resumed one needs none).
      if (!cursor && vaults) {
        const snaps = await snapshotsOf(pool, vaults);
        if (single && snaps.size === 0) throw notFound(`vault ${vaults[0]} not found`);
        initial = vaults.flatMap((v) => {
          const s = snaps.get(v);
          return s ? [{ event: 'snapshot' as const, data: snapshotData(v, s.etag, s.json) }] : [];
        });
      }
    } catch (err) {
      lease.release();
      throw err;
    }
    const filter = vaults ? new Set(vaults) : null;
    c.header('X-Accel-Buffering', 'no');
    const res = streamSSE(
      c,
      async (stream) => {
        const ac = new AbortController();
        stream.onAbort(() => ac.abort());
        try {
          await run(stream, ac.signal, start, initial, reset, filter, vaults);
        } finally {
          lease.release();
        }
      },
      async (err) => {
        log.warn({ err }, 'live stream failed');
      },
    );
    res.headers.set('Cache-Control', 'no-store');
    return res;
  };

  const run = async (
    stream: SSEStreamingApi,
    signal: AbortSignal,
    start: StreamCursor,
    initial: Event[],
    firstReset: string | null,
    filter: ReadonlySet<string> | null,
    vaults: string[] | null,
  ) => {
    let cursor = start;
    let epoch = hub.epoch();
    await stream.write(`retry: ${RECONNECT_MS}\n\n`);
    const startOver = async (reason: string) => {
      const { head } = await hub.refresh();
      cursor = { seq: head, pos: 0 };
      const id = encodeStreamCursor(cursor);
      await stream.writeSSE({ id, event: 'reset', data: JSON.stringify({ reason, cursor: id }) });
      if (vaults) {
        const snaps = await snapshotsOf(pool, vaults);
        for (const v of vaults) {
          const s = snaps.get(v);
          if (s) await stream.writeSSE({ id, event: 'snapshot', data: snapshotData(v, s.etag, s.json) });
        }
      }
    };
    if (firstReset) await startOver(firstReset);
    else for (const e of initial) await stream.writeSSE({ id: encodeStreamCursor(cursor), ...e });

    /** Every commit up to `checked` that concerns this stream has been read (the cursor may lag). */
    let checked = cursor.seq;
    /** Read from the cursor whatever the notifications said (after a heartbeat's silence). */
    let force = false;
    while (!signal.aborted && !stream.aborted && !stream.closed) {
      try {
        if (hub.epoch() !== epoch) {
          epoch = hub.epoch();
          await startOver('the projection behind this reader changed (rebuild): start again from the API');
          checked = cursor.seq;
          continue;
        }
        const head = hub.head();
        if (cursor.pos > 0 || (head > cursor.seq && (force || hub.relevant(checked, filter)))) {
          force = false;
          const commits = await hub.commitsAfter(cursor.pos > 0 ? cursor.seq - 1n : cursor.seq);
          if (commits.length === 0 && cursor.pos > 0) cursor = { seq: cursor.seq, pos: 0 };
          for (const commit of commits) {
            if (signal.aborted || stream.aborted) break;
            const skip = commit.seq === cursor.seq ? cursor.pos : 0;
            const events = eventsOf(commit, filter);
            for (let i = skip; i < events.length; i++) {
              const e = events[i] as Event;
              await stream.writeSSE({ id: encodeStreamCursor({ seq: commit.seq, pos: i + 1 }), ...e });
            }
            cursor = { seq: commit.seq, pos: 0 };
          }
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
          await stream.write(': keep-alive\n\n');
          force = true;
        }
      } catch (err) {
        // Postgres unreachable: the stream stays open and tries again (its cursor is unchanged).
        log.warn({ err: { message: (err as Error).message } }, 'live stream read failed; retrying');
        if ((await hub.wait(2n ** 63n, 1_000, signal, filter)) === 'closed') break;
      }
    }
  };

  return new OpenAPIHono({ defaultHook: validationHook })
    .openapi(routes.vaultStream, async (c) => {
      const vault = c.req.valid('param').address;
      return (await open(c, [vault], true)) as never;
    })
    .openapi(routes.stream, async (c) => {
      const q = c.req.valid('query');
      return (await open(c, q.vault && q.vault.length > 0 ? q.vault : null, false)) as never;
    });
}
