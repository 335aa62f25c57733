/** The part of Hono's SSE stream a live stream writes through. */
export interface SseSink {
  write(text: string): Promise<unknown>;
  writeSSE(e: { id: string; event: string; data: string }): Promise<unknown>;
}

/** A live stream's output: text (the `retry:` line, keep-alives) and events. */
export interface StreamOut {
  write(text: string): Promise<void>;
  event(e: { id: string; event: string; data: string }): Promise<void>;
}

/** A stream's writes between two turns of the event loop (see createTimedWriter). */
export const YIELD_EVERY = 32;

/**
 * Writes that give up after `writeTimeoutMs` (then `onLate`); nothing is written once `signal`
 * aborted. Every YIELD_EVERY writes a stream lets the event loop's I/O phase run (`setImmediate`):
 * a write to a client that keeps up resolves in a microtask, so a replay of thousands of rows
 * would otherwise run as one chain of microtasks and hold every other request and stream of the
 * process until its socket's buffers fill (tens of MiB on a fast link).
 */
export function createTimedWriter(
  sink: SseSink,
  signal: AbortSignal,
  writeTimeoutMs: number,
  onLate: () => void,
): StreamOut {
  let writes = 0;
  const timed = async (write: () => Promise<unknown>) => {
    if (signal.aborted) return;
    if (++writes % YIELD_EVERY === 0) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (signal.aborted) return;
    }
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        resolve();
        onLate();
      }, writeTimeoutMs);
    });
    try {
      await Promise.race([write(), late]);
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    write: (text) => timed(() => sink.write(text)),
    event: (e) => timed(() => sink.writeSSE(e)),
  };
}
