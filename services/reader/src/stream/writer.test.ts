import { describe, expect, it } from 'vitest';
import { createTimedWriter, type SseSink, YIELD_EVERY } from './writer.js';

/** A client that keeps up: every write is taken at once (resolved in a microtask). */
const eager = (): SseSink & { written: number } => {
  const sink = {
    written: 0,
    write: async () => {
      sink.written++;
    },
    writeSSE: async () => {
      sink.written++;
    },
  };
  return sink;
};

describe('createTimedWriter', () => {
  it('lets the event loop turn every YIELD_EVERY writes, so a replay to a fast client never holds the process', async () => {
    const sink = eager();
    const out = createTimedWriter(sink, new AbortController().signal, 10_000, () => {});
    // Turns of the event loop's check phase while 10 × YIELD_EVERY events are written back to back
    // (without the yield, writes that resolve in microtasks let none happen until the end).
    let turns = 0;
    let done = false;
    const tick = () => {
      if (done) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    for (let i = 0; i < 10 * YIELD_EVERY; i++)
      await out.event({ id: String(i), event: 'ledger', data: '{}' });
    done = true;
    expect(sink.written).toBe(10 * YIELD_EVERY);
    expect(turns).toBeGreaterThanOrEqual(9);
  });

  it('writes nothing once its signal aborted, also when the abort comes while it yields', async () => {
    const sink = eager();
    const ac = new AbortController();
    const out = createTimedWriter(sink, ac.signal, 10_000, () => {});
    for (let i = 0; i < YIELD_EVERY - 1; i++) await out.write(': keep-alive\n\n');
    const yielding = out.write('x'); // the YIELD_EVERY-th: waits a turn first
    ac.abort();
    await yielding;
    await out.write('y');
    expect(sink.written).toBe(YIELD_EVERY - 1);
  });

  it('gives up a write that the client does not take within the deadline, and says so once', async () => {
    let late = 0;
    const stuck: SseSink = { write: () => new Promise(() => {}), writeSSE: () => new Promise(() => {}) };
    const out = createTimedWriter(stuck, new AbortController().signal, 20, () => late++);
    await out.write('never taken');
    expect(late).toBe(1);
  });
});
