import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServedReader } from './served.js';

/**
 * The audit asks the reader for the vaults of its node's chain, by id (#45): a bare address that
 * is a vault on several chains answers 409, so the audit must never name a vault by its address.
 * A stand-in reader records the paths asked.
 */
const A = `0x${'ab'.repeat(20)}`;
let server: Server;
let url: string;
const asked: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    asked.push(req.url ?? '');
    res.setHeader('content-type', 'application/json');
    if (req.url?.startsWith('/v1/vaults')) res.end(JSON.stringify([{ vault: A }]));
    else if (req.url?.endsWith('/snapshot')) res.end(JSON.stringify({ valueUsd: 1.5, blockNumber: 7 }));
    else res.end(JSON.stringify([{ blockNumber: 7, blockHash: `0x${'0'.repeat(64)}` }]));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('the served reader of an audit', () => {
  it("lists the node's chain's vaults and names each by its id; the chain is asked once", async () => {
    let asks = 0;
    const served = createServedReader(url, async () => {
      asks++;
      return 31338;
    });
    expect(await served.vaults()).toEqual([A]);
    expect(await served.snapshot(A.toUpperCase().replace('0X', '0x'))).toEqual({
      vault: A,
      valueUsd: 1.5,
      blockNumber: 7,
    });
    expect(await served.newestRow(A)).toEqual({ blockNumber: 7, blockHash: `0x${'0'.repeat(64)}` });
    expect(asked).toEqual([
      '/v1/vaults?chainId=31338&limit=500',
      `/v1/vault/eip155:31338:${A}/snapshot`,
      `/v1/vault/eip155:31338:${A}/events?limit=1`,
    ]);
    expect(asks).toBe(1);
  });
});
