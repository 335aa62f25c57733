import type { Hash } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AnvilInstance, startAnvil } from '../anvil.js';
import { devChain } from '../rpc.js';
import { createDriverClients, type DriverClients, minedReceipt } from './wallet.js';

/**
 * minedReceipt on a real anvil. (The state it mends — a transaction pending while automine is on,
 * which anvil's miner race leaves behind — cannot be made on purpose: turning automine on mines
 * what is pending.) A transaction pending with automine off is the caller's to mine: it is waited
 * for, never mined for it, and the error says so; one the node does not know fails at once.
 */
describe('minedReceipt', () => {
  let anvil: AnvilInstance;
  let c: DriverClients;
  beforeAll(async () => {
    anvil = await startAnvil();
    c = await createDriverClients(anvil.rpcUrl);
  });
  afterAll(async () => {
    await anvil?.stop();
  });

  const transfer = () =>
    c.walletClient.sendTransaction({
      account: c.accounts[0]!,
      to: c.accounts[1]!,
      value: 1n,
      chain: c.chain,
    });

  it('returns at once when automine mined the transaction', async () => {
    const hash = await transfer();
    const t0 = Date.now();
    const r = await minedReceipt(c.publicClient, hash);
    expect(r.status).toBe('success');
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it('leaves a transaction pending with automine off to its caller, and says so', async () => {
    const dev = devChain(anvil.rpcUrl);
    const before = await dev.blockNumber();
    await dev.setAutomine(false);
    try {
      const hash = await transfer();
      await expect(minedReceipt(c.publicClient, hash, { stuckMs: 300, rounds: 2 })).rejects.toThrow(
        /not mined after 2 × 300 ms \(automine false, pending; txpool: .*"0x[0-9a-fA-F]{40}"/,
      );
      // It mined nothing for the caller, who means to put transactions in one block.
      expect(await dev.blockNumber()).toBe(before);
    } finally {
      await dev.setAutomine(true);
    }
  });

  it('fails with the node’s account of a transaction it does not know', async () => {
    const unknown = `0x${'ab'.repeat(32)}` as Hash;
    await expect(minedReceipt(c.publicClient, unknown)).rejects.toThrow(
      /transaction 0xabab\S+ not mined after 1 × 3000 ms \(automine true, unknown to the node; txpool: /,
    );
  });
});
