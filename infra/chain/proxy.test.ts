import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CuttableProxy, cuttableProxy } from './proxy.js';

/** Sends `text` through `url` and resolves what came back, or the error that closed the link. */
function roundTrip(url: string, text: string, opened?: (s: Socket) => void): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), hostname, () => {
      opened?.(s);
      s.write(text);
    });
    let got = '';
    s.on('data', (d) => {
      got += d.toString();
      if (got.length >= text.length) {
        s.end();
        resolve(got);
      }
    });
    s.on('error', reject);
    s.on('close', () => reject(new Error(`closed after ${JSON.stringify(got)}`)));
  });
}

describe('cuttableProxy: a node that went down and came back', () => {
  let echo: Server;
  let proxy: CuttableProxy;

  beforeAll(async () => {
    echo = createServer((s) => {
      s.on('error', () => {}); // reset by the proxy at the cut
      s.pipe(s);
    });
    await new Promise<void>((res) => echo.listen(0, '127.0.0.1', () => res()));
    proxy = await cuttableProxy(`http://127.0.0.1:${(echo.address() as { port: number }).port}`);
  });
  afterAll(async () => {
    await proxy.close();
    await new Promise<void>((res) => echo.close(() => res()));
  });

  it('passes bytes through while up', async () => {
    expect(proxy.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await roundTrip(proxy.url, 'ping')).toBe('ping');
  });

  it('cut: an open connection is reset and a new one refused; restored: it passes again', async () => {
    // A connection open at the cut (a WebSocket subscription) dies with it.
    let open: Socket | undefined;
    const held = new Promise<void>((resolve, reject) => {
      const { port } = new URL(proxy.url);
      open = connect(Number(port), '127.0.0.1', () => resolve());
      open.on('error', () => {});
      open.once('error', reject);
    });
    await held;
    await new Promise((r) => setTimeout(r, 20)); // the proxy has accepted it
    const closed = new Promise<void>((resolve) => open!.once('close', () => resolve()));
    proxy.cut();
    await closed;
    await expect(roundTrip(proxy.url, 'down')).rejects.toThrow();
    proxy.restore();
    expect(await roundTrip(proxy.url, 'back')).toBe('back');
  });
});
