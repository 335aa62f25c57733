import { vaultAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  createVault,
  deployReferenceStack,
  devChain,
  fundOwner,
  openAround,
  type ReferenceStack,
  startAnvil,
  type TrackedVault,
  write,
} from '@vault-yield/devstack/chain';
import type { SnapshotView } from '@vault-yield/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChainsPipeline, startChainsPipeline } from './pipeline.js';

/**
 * Many chains (#45): two local chains (ids 31337 and 31338) where the same deployer deployed the
 * same reference stack, so the factory and the first vault have the SAME address on both. One
 * deployment follows both (an indexer per chain, one topic, one projector, one reader). Each
 * vault id serves its own chain's history, and its value is its own chain's independent valuation
 * at that chain's head (test/chain-truth/index.ts); the bare address is ambiguous (409 naming
 * both); a reorg on one chain reverts only that chain's vault.
 */

type Snapshot = SnapshotView & { id: string; chainId: number };
interface Row {
  type: string;
  chainId: number;
  blockNumber: number;
}

describe('the same vault address on two chains', () => {
  const anvils: AnvilInstance[] = [];
  const stacks: ReferenceStack[] = [];
  const vaults: TrackedVault[] = [];
  let p: ChainsPipeline;
  const id = (chain: number) => `eip155:${anvils[chain]!.chainId}:${vaults[chain]!.address}`;
  const snapshot = async (chain: number) => {
    const res = await p.api.get(`/v1/vault/${id(chain)}/snapshot`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as Snapshot;
  };
  const deposit = (chain: number, side: 0 | 1, whole: bigint) => {
    const stack = stacks[chain]!;
    const v = vaults[chain]!;
    const t = side === 0 ? v.pool.token0 : v.pool.token1;
    return write(stack.clients, v.owner, v.address, vaultAbi, 'deposit', [
      t.address,
      whole * 10n ** BigInt(t.decimals),
    ]);
  };
  const expectTruth = async (chain: number) => {
    const truth = await p.truth(chain, vaults[chain]!.address as `0x${string}`);
    const served = await snapshot(chain);
    expect(Math.abs(served.valueUsd - Number(truth.valueUsd)), `chain ${served.chainId}`).toBeLessThan(1e-6);
    return served;
  };

  beforeAll(async () => {
    anvils.push(await startAnvil(), await startAnvil({ args: ['--chain-id', '31338'] }));
    for (const a of anvils) stacks.push(await deployReferenceStack(a.rpcUrl));
    for (const s of stacks) {
      const v = await createVault(s, s.accounts.owners[0]!, s.pools[0]!, 'two-chains');
      await fundOwner(s, v, 100n, 400_000n);
      vaults.push(v);
    }
    // Different histories at the same address: chain A holds more and has a position; B only idles.
    await deposit(0, 0, 5n);
    await deposit(0, 1, 10_000n);
    await openAround(stacks[0]!, vaults[0]!, 600, 50n);
    await deposit(1, 0, 1n);
    await deposit(1, 1, 2_000n);
    p = await startChainsPipeline(
      anvils.map((anvil, i) => ({ anvil, stack: stacks[i]! })),
      'two_chains',
      { mark: { intervalBlocks: 0, minIntervalMs: 0 } },
    );
  }, 240_000);

  afterAll(async () => {
    await p?.stop();
    for (const a of anvils) await a.stop();
  });

  it('has the same factory and vault address on both chains (the premise)', () => {
    expect(stacks[1]!.factory).toBe(stacks[0]!.factory);
    expect(vaults[1]!.address).toBe(vaults[0]!.address);
    expect(anvils.map((a) => a.chainId)).toEqual([31337, 31338]);
  });

  it('serves each chain’s vault at its id, each its own chain’s valuation; the bare address is ambiguous', async () => {
    await p.settle();
    const [a, b] = [await expectTruth(0), await expectTruth(1)];
    expect([a.id, a.chainId]).toEqual([id(0), 31337]);
    expect([b.id, b.chainId]).toEqual([id(1), 31338]);
    expect(a.positions).toHaveLength(1);
    expect(b.positions).toHaveLength(0);
    expect(a.capitalInUsd).toBeGreaterThan(b.capitalInUsd * 3);

    for (const chain of [0, 1]) {
      const events = (await p.api.get(`/v1/vault/${id(chain)}/events`)).body as Row[];
      expect(events.length).toBeGreaterThan(0);
      expect(new Set(events.map((e) => e.chainId))).toEqual(new Set([anvils[chain]!.chainId]));
      expect(events.some((e) => e.type === 'position.opened')).toBe(chain === 0);
      const equity = (await p.api.get(`/v1/vault/${id(chain)}/equity`)).body as { chainId: number }[];
      expect(equity.length).toBeGreaterThan(0);
      expect(new Set(equity.map((e) => e.chainId))).toEqual(new Set([anvils[chain]!.chainId]));
    }

    const bare = await p.api.get(`/v1/vault/${vaults[0]!.address}/snapshot`);
    expect(bare.status).toBe(409);
    expect(bare.body).toEqual({
      error: { code: 'ambiguous_vault', message: expect.any(String), candidates: [id(0), id(1)] },
    });
  });

  it('reverts a reorg on one chain in that chain’s vault only', async () => {
    await p.settle();
    const aBefore = await snapshot(0);
    const bBefore = await snapshot(1);
    // A deposit on chain B, seen and served; then B's last block is replaced by an empty one.
    await deposit(1, 1, 3_000n);
    await p.settle();
    const bWith = await expectTruth(1);
    expect(bWith.capitalInUsd - bBefore.capitalInUsd).toBeGreaterThan(1_000);
    await devChain(anvils[1]!.rpcUrl).reorg(1, []);
    await devChain(anvils[1]!.rpcUrl).mine(2);
    await p.settle();
    const bAfter = await expectTruth(1);
    expect(bAfter.capitalInUsd).toBeCloseTo(bBefore.capitalInUsd, 6);
    const bEvents = (await p.api.get(`/v1/vault/${id(1)}/events`)).body as Row[];
    expect(bEvents.filter((e) => e.type === 'deposit')).toHaveLength(2);
    // Chain A's vault — same address — is untouched: the same snapshot, its truth still.
    expect(await expectTruth(0)).toEqual(aBefore);
  });
});
