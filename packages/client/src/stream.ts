import { retryAfterMs } from './retry.js';
import type {
  LedgerRow,
  StreamHandlers,
  StreamResetEvent,
  StreamRetractEvent,
  StreamSnapshotEvent,
  StreamState,
  StreamStateInfo,
  SubscribeOptions,
  Subscription,
} from './types.js';

/** One server-sent event as parsed (the WHATWG `text/event-stream` rules). */
export interface SseEvent {
  event: string;
  data: string;
  id: string | undefined;
}

/**
 * An incremental `text/event-stream` parser: feed it text as it arrives, it calls `onEvent` for
 * each dispatched event and `onRetry` for a `retry:` field. Comments (`:`) are ignored.
 */
export function createSseParser(onEvent: (e: SseEvent) => void, onRetry: (ms: number) => void = () => {}) {
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  let lastId: string | undefined;
  let sawCr = false;
  const line = (text: string) => {
    if (text === '') {
      if (id !== undefined) lastId = id;
      if (data.length > 0) onEvent({ event: event || 'message', data: data.join('\n'), id: lastId });
      event = '';
      data = [];
      id = undefined;
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) onRetry(Number(value));
  };
  return {
    push(chunk: string) {
      let text = buffer + chunk;
      // A CR at the end of the last chunk already ended a line: a leading LF now is its pair.
      if (sawCr && text.startsWith('\n')) text = text.slice(1);
      sawCr = false;
      let start = 0;
      for (let i = 0; i < text.length; i++) {
        const ch = text.charCodeAt(i);
        if (ch !== 10 && ch !== 13) continue;
        line(text.slice(start, i));
        if (ch === 13) {
          if (i + 1 < text.length) {
            if (text.charCodeAt(i + 1) === 10) i++;
          } else sawCr = true;
        }
        start = i + 1;
      }
      buffer = text.slice(start);
    },
  };
}

export interface StreamTarget {
  /** Absolute URL of the stream. */
  url: string;
  fetch: typeof fetch;
  headers: Record<string, string>;
}

const wait = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });

/**
 * Follows a live stream with fetch (streamed body, parsed here: Node ≥ 20 and browsers alike),
 * reconnecting after a loss or a refusal with `Last-Event-ID` = the last event's id, so no event
 * is missed or repeated. A 503 / 429 is retried after its `Retry-After`; a 400 / 404 closes it.
 */
export function openSubscription(
  target: StreamTarget,
  handlers: StreamHandlers,
  options: SubscribeOptions = {},
): Subscription {
  const ac = new AbortController();
  const outer = options.signal;
  const onOuter = () => ac.abort(outer?.reason);
  if (outer) {
    if (outer.aborted) ac.abort(outer.reason);
    else outer.addEventListener('abort', onOuter, { once: true });
  }
  const minRetry = options.retryMs ?? 1_000;
  const maxRetry = options.maxRetryMs ?? 30_000;
  let lastEventId = options.lastEventId;
  let state: StreamState = 'connecting';
  let serverRetry: number | undefined;
  const setState = (s: StreamState, info: StreamStateInfo = {}) => {
    state = s;
    handlers.state?.(s, info);
  };

  const dispatch = (e: SseEvent) => {
    if (e.id !== undefined) lastEventId = e.id;
    const id = e.id ?? '';
    if (e.event === 'ledger') handlers.ledger?.(JSON.parse(e.data) as LedgerRow, id);
    else if (e.event === 'snapshot') handlers.snapshot?.(JSON.parse(e.data) as StreamSnapshotEvent, id);
    else if (e.event === 'retract') handlers.retract?.(JSON.parse(e.data) as StreamRetractEvent, id);
    else if (e.event === 'reset') handlers.reset?.(JSON.parse(e.data) as StreamResetEvent, id);
  };

  const run = async () => {
    let delay = minRetry;
    setState('connecting');
    while (!ac.signal.aborted) {
      let status: number | undefined;
      let error: unknown;
      let retryIn: number | undefined;
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream', ...target.headers };
        if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
        const res = await target.fetch(target.url, { method: 'GET', headers, signal: ac.signal });
        status = res.status;
        const type = res.headers.get('content-type') ?? '';
        if (res.status === 200 && type.startsWith('text/event-stream') && res.body) {
          setState('live', { status });
          delay = minRetry;
          const reader = res.body.getReader();
          const decoder = new TextDecoder();
          const parser = createSseParser(dispatch, (ms) => {
            serverRetry = ms;
          });
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            parser.push(decoder.decode(value, { stream: true }));
          }
          error = new Error('stream ended');
        } else {
          const text = await res.text().catch(() => '');
          error = new Error(`${res.status} ${text.slice(0, 300)}`);
          if (res.status !== 429 && res.status < 500) {
            setState('closed', { status, error });
            return;
          }
          retryIn = retryAfterMs(res.headers.get('retry-after'));
        }
      } catch (err) {
        if (ac.signal.aborted) break;
        error = err;
      }
      if (ac.signal.aborted) break;
      const ms = Math.min(maxRetry, retryIn ?? serverRetry ?? delay);
      setState('reconnecting', { ...(status === undefined ? {} : { status }), retryInMs: ms, error });
      await wait(ms, ac.signal);
      delay = Math.min(maxRetry, delay * 2);
    }
    setState('closed');
  };

  const closed = run().finally(() => outer?.removeEventListener('abort', onOuter));
  return {
    get lastEventId() {
      return lastEventId;
    },
    get state() {
      return state;
    },
    close: () => ac.abort(),
    closed,
  };
}
