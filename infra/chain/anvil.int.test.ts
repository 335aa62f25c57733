import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnvilInstance, startAnvil } from './anvil.js';
import { devChain } from './rpc.js';

describe('startAnvil + dev-chain controls', () => {
  let anvil: AnvilInstance;
  beforeAll(async () => {
    anvil = await startAnvil();
  });
  afterAll(async () => {
    await anvil?.stop();
  });

  const block = (n: bigint | 'latest') =>
    devChain(anvil.rpcUrl).rpc.call<{ number: string; hash: string; parentHash: string }>(
      'eth_getBlockByNumber',
      [n === 'latest' ? n : `0x${n.toString(16)}`, false],
    );

  it('listens on a free local port with the anvil chain id', async () => {
    expect(anvil.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const id = await devChain(anvil.rpcUrl).rpc.call<string>('eth_chainId');
    expect(Number(id)).toBe(anvil.chainId);
  });

  it('anvil_reorg replaces the last blocks with new hashes on the same parent', async () => {
    const dev = devChain(anvil.rpcUrl);
    await dev.mine(5);
    const head = await dev.blockNumber();
    const before = await Promise.all([block(head - 2n), block(head - 1n), block(head)]);
    await dev.reorg(2);
    const after = await Promise.all([block(head - 2n), block(head - 1n), block(head)]);
    expect(await dev.blockNumber()).toBe(head);
    expect(after[0]!.hash).toBe(before[0]!.hash);
    expect(after[1]!.hash).not.toBe(before[1]!.hash);
    expect(after[2]!.hash).not.toBe(before[2]!.hash);
    expect(after[1]!.parentHash).toBe(before[0]!.hash);
    expect(after[2]!.parentHash).toBe(after[1]!.hash);
  });

  it('another chain id: the same accounts under another chain (a second local chain)', async () => {
    const other = await startAnvil({ chainId: 31338 });
    try {
      expect(other.chainId).toBe(31338);
      expect(Number(await devChain(other.rpcUrl).rpc.call<string>('eth_chainId'))).toBe(31338);
      expect(await devChain(other.rpcUrl).rpc.call<string[]>('eth_accounts')).toEqual(
        await devChain(anvil.rpcUrl).rpc.call<string[]>('eth_accounts'),
      );
    } finally {
      await other.stop();
    }
  });

  it('stop() ends exactly its own process', async () => {
    const other = await startAnvil();
    await other.stop();
    expect(() => process.kill(other.pid, 0)).toThrow();
    expect(() => process.kill(anvil.pid, 0)).not.toThrow();
  });
});
