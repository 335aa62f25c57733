import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCountingChainClient } from './client.js';

/** What the counting client tells its observer: each call on the wire, and its time to answer. */

interface Call {
  id: number;
  method: string;
  params?: unknown[];
}

let server: Server;
let url: string;
/** HTTP requests the node received, as the methods of their calls. */
const requests: string[][] = [];

beforeAll(async () => {
  // A node that answers after 40 ms; eth_call fails with an RPC error.
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const parsed = JSON.parse(body) as Call | Call[];
      const calls = Array.isArray(parsed) ? parsed : [parsed];
      requests.push(calls.map((c) => c.method));
      const answer = (c: Call) =>
        c.method === 'eth_call'
          ? { jsonrpc: '2.0', id: c.id, error: { code: -32000, message: 'execution reverted' } }
          : { jsonrpc: '2.0', id: c.id, result: c.method === 'eth_chainId' ? '0x1' : '0x10' };
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(Array.isArray(parsed) ? calls.map(answer) : answer(calls[0]!)));
      }, 40);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('createCountingChainClient observer', () => {
  it('is told of each call on the wire (batched or not, coalesced once) and of its time to answer', async () => {
    const sent: string[] = [];
    const done: { method: string; seconds: number; failed: boolean }[] = [];
    const { client, logsClient, stats } = createCountingChainClient({
      rpcUrl: url,
      chainId: 1,
      observer: {
        onCall: (method) => sent.push(method),
        onCallDone: (method, seconds, failed) => done.push({ method, seconds, failed }),
      },
    });
    requests.length = 0;
    const balance = (a: string) =>
      client.request({ method: 'eth_getBalance', params: [`0x${a.repeat(40)}`, 'latest'] });
    // Three calls at once, two of them identical: one batch of two calls on the wire.
    await Promise.all([balance('1'), balance('1'), balance('2')]);
    expect(requests).toEqual([['eth_getBalance', 'eth_getBalance']]);
    expect(sent).toEqual(['eth_getBalance', 'eth_getBalance']);
    expect(done).toHaveLength(2);
    for (const d of done) {
      expect(d).toMatchObject({ method: 'eth_getBalance', failed: false });
      expect(d.seconds).toBeGreaterThanOrEqual(0.035);
      expect(d.seconds).toBeLessThan(5);
    }
    expect(stats.calls).toBe(2);

    // The unbatched client reports to the same observer; a call the node refuses is timed as failed.
    await logsClient.request({ method: 'eth_blockNumber' });
    await expect(
      logsClient.request({
        method: 'eth_call',
        params: [{ to: `0x${'3'.repeat(40)}`, data: '0x' }, 'latest'],
      }),
    ).rejects.toThrow();
    expect(sent.slice(2)).toEqual(['eth_blockNumber', 'eth_call']);
    expect(done.slice(2).map((d) => [d.method, d.failed])).toEqual([
      ['eth_blockNumber', false],
      ['eth_call', true],
    ]);
    expect(stats.calls).toBe(sent.length);
  });

  it('counts as before without an observer', async () => {
    const { client, stats } = createCountingChainClient({ rpcUrl: url, chainId: 1 });
    await client.request({ method: 'eth_blockNumber' });
    expect(stats.calls).toBe(1);
    expect(stats.byMethod.get('eth_blockNumber')).toBe(1);
  });
});
