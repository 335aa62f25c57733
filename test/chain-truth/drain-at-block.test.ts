import { testTokenAbi, vaultAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  createVault,
  deployReferenceStack,
  devChain,
  fundOwner,
  type ReferenceStack,
  startAnvil,
  type TrackedVault,
  write,
} from '@vault-yield/devstack/chain';
import type { SnapshotView } from '@vault-yield/domain';
import type { Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { valueAt } from './index.js';
import { type ChainPipeline, startChainPipeline } from './pipeline.js';

interface LedgerRow {
  type: string;
  blockNumber: number;
  data: Record<string, unknown>;
}

/**
 * Tokens leaving a vault with no vault event (an abused approval, a compromised strategy, a
 * token's clawback) are seen at their own block (#43 item 4): the indexer watches transfers *from*
 * vaults too, so the vault is valued at the block of the transfer — the snapshot served at that
 * block, before any mark or later record, shows the loss (`drain` naming the block) and the
 * chain's value there. A withdrawal — the vault's event and its transfer out in one transaction —
 * books no drain; a transfer from one vault to another is one loss and one transfer.received.
 * The mark cadence is far beyond the test's blocks and no price moves: only the transfer itself
 * can make the vault's record at its block.
 */
describe('a drain is booked at its own block', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let p: ChainPipeline;
  let a: TrackedVault;
  let b: TrackedVault;

  const client = () => stack.clients.publicClient;
  const snapshot = async (vault: Address): Promise<SnapshotView> => {
    const r = await p.api.get(`/v1/vault/${vault}/snapshot`);
    expect(r.status, r.text.slice(0, 200)).toBe(200);
    return r.body as SnapshotView;
  };
  const ledger = async (vault: Address, type: string): Promise<LedgerRow[]> =>
    (await p.api.get(`/v1/vault/${vault}/events?type=${type}&limit=500`)).body as LedgerRow[];
  const whole = (t: TrackedVault['pool']['token0'], usd: number) =>
    BigInt(Math.round((usd / t.usd) * 10 ** Math.min(t.decimals, 6))) *
    10n ** BigInt(t.decimals - Math.min(t.decimals, 6));
  const usdOf = (t: TrackedVault['pool']['token0'], raw: bigint) => (Number(raw) / 10 ** t.decimals) * t.usd;

  /** The vault's own address moves its tokens (impersonated, as an abused approval would): no vault event. */
  async function drain(v: TrackedVault, t: TrackedVault['pool']['token0'], to: Address, amount: bigint) {
    const { rpc } = devChain(anvil.rpcUrl);
    await rpc.call('anvil_impersonateAccount', [v.address]);
    await rpc.call('anvil_setBalance', [v.address, '0x56bc75e2d63100000']);
    try {
      return await write(stack.clients, v.address, t.address, testTokenAbi, 'transfer', [to, amount]);
    } finally {
      await rpc.call('anvil_stopImpersonatingAccount', [v.address]);
    }
  }

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    const pool = stack.pools[0]!;
    a = await createVault(stack, stack.accounts.owners[0]!, pool, 'drain-a');
    b = await createVault(stack, stack.accounts.owners[1 % stack.accounts.owners.length]!, pool, 'drain-b');
    for (const v of [a, b]) {
      await fundOwner(stack, v, 1_000_000n, 1_000_000n);
      for (const t of [pool.token0, pool.token1])
        await write(stack.clients, v.owner, v.address, vaultAbi, 'deposit', [t.address, whole(t, 10_000)]);
    }
    // No mark within the test's blocks: a vault's record at a block is an event's or the drain's.
    p = await startChainPipeline(anvil, stack, 'drain_at_block', {
      mark: { intervalBlocks: 1_000_000, minIntervalMs: 0 },
    });
    await p.settle();
  }, 180_000);

  afterAll(async () => {
    await p?.stop();
    await anvil?.stop();
  });

  it('a withdrawal (the vault’s event and its transfer out in one transaction) books no drain', async () => {
    const t = a.pool.token1;
    const before = await snapshot(a.address);
    const amount = whole(t, 1_000);
    const r = await write(stack.clients, a.owner, a.address, vaultAbi, 'withdraw', [t.address, amount]);
    await p.settle();
    const after = await snapshot(a.address);
    expect(after.blockNumber).toBe(Number(r.blockNumber));
    expect(after.drain ?? null).toBeNull();
    expect(after.fees.unexplainedOutUsd ?? 0).toBe(before.fees.unexplainedOutUsd ?? 0);
    expect(after.capitalOutUsd - before.capitalOutUsd).toBeCloseTo(usdOf(t, amount), 2);
    expect(after.netUsd).toBeCloseTo(before.netUsd, 2);
    expect(await ledger(a.address, 'balance.reconciled')).toEqual([]);
  });

  it('tokens taken with no vault event at block B: the snapshot at B shows the loss, drain at B, the chain’s value at B', async () => {
    const t = a.pool.token0;
    const before = await snapshot(a.address);
    const amount = whole(t, 2_500);
    const r = await drain(a, t, stack.accounts.deployer, amount);
    const B = Number(r.blockNumber);
    await p.settle();
    expect(Number(await client().getBlockNumber())).toBe(B);
    const after = await snapshot(a.address);
    const lost = usdOf(t, amount);
    // valued at B (before: at the vault's last record, the withdrawal's block, no loss and no flag)
    expect(after.blockNumber).toBe(B);
    const truth = await valueAt(client(), a.address, BigInt(B));
    expect(Math.abs(after.valueUsd - Number(truth.valueUsd))).toBeLessThan(0.01);
    expect(after.valueUsd - before.valueUsd).toBeCloseTo(-lost, 2);
    // a loss, never capital out; flagged at B
    expect((after.fees.unexplainedOutUsd ?? 0) - (before.fees.unexplainedOutUsd ?? 0)).toBeCloseTo(lost, 2);
    expect(after.netUsd - before.netUsd).toBeCloseTo(-lost, 2);
    expect(after.capitalOutUsd).toBe(before.capitalOutUsd);
    expect(after.drain).toMatchObject({ blockNumber: B });
    expect(after.drain!.lostUsd).toBeCloseTo(lost, 2);
    expect(after.status).toBe('attention');
    const rows = await ledger(a.address, 'balance.reconciled');
    expect(rows.map((x) => [x.blockNumber, x.data.bookedAs, x.data.amount])).toEqual([
      [B, 'loss', String(-amount)],
    ]);
  });

  it('from one vault to another: a loss of the sender’s at the block, capital received by the recipient once', async () => {
    const t = a.pool.token1;
    const [beforeA, beforeB] = [await snapshot(a.address), await snapshot(b.address)];
    const amount = whole(t, 500);
    const r = await drain(a, t, b.address, amount);
    const B = Number(r.blockNumber);
    await p.settle();
    const [afterA, afterB] = [await snapshot(a.address), await snapshot(b.address)];
    const moved = usdOf(t, amount);
    expect(afterA.blockNumber).toBe(B);
    expect(afterB.blockNumber).toBe(B);
    for (const [v, s] of [
      [a, afterA],
      [b, afterB],
    ] as const) {
      const truth = await valueAt(client(), v.address, BigInt(B));
      expect(Math.abs(s.valueUsd - Number(truth.valueUsd)), v.address).toBeLessThan(0.01);
    }
    expect((afterA.fees.unexplainedOutUsd ?? 0) - (beforeA.fees.unexplainedOutUsd ?? 0)).toBeCloseTo(
      moved,
      2,
    );
    expect(afterA.drain).not.toBeNull();
    // the transfer is read by two filters (to a vault, from a vault): booked once
    const received = (await ledger(b.address, 'transfer.received')).filter((x) => x.blockNumber === B);
    expect(received).toHaveLength(1);
    expect((afterB.fees.receivedUsd ?? 0) - (beforeB.fees.receivedUsd ?? 0)).toBeCloseTo(moved, 2);
    expect(afterB.netUsd).toBeCloseTo(beforeB.netUsd, 2);
    expect(afterB.drain ?? null).toBeNull();
  });
});
