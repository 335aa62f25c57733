import { testTokenAbi, vaultAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  churn,
  close,
  collectFees,
  createVault,
  deployReferenceStack,
  fundOwner,
  openAround,
  type ReferenceStack,
  startAnvil,
  type TrackedVault,
  write,
} from '@vault-yield/devstack/chain';
import type { SnapshotView } from '@vault-yield/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChainPipeline, startChainPipeline } from './pipeline.js';

interface Row {
  type: string;
  txHash: string;
  data: Record<string, string>;
}

/**
 * The fold never refuses what the chain accepted (issue: a plain transfer then a full withdrawal
 * went to dead letters; fees collected after a close too). Each case shows in GET events and in
 * the snapshot exactly as the chain moved the money, and nothing is dead-lettered.
 */
describe('the fold applies what the chain accepted', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let p: ChainPipeline;
  let v: TrackedVault;

  const snapshot = async () => (await p.api.get(`/v1/vault/${v.address}/snapshot`)).body as SnapshotView;
  const events = async (q = '') =>
    (await p.api.get(`/v1/vault/${v.address}/events?limit=500${q}`)).body as Row[];
  const settle = () => p.settle();
  const truth = async () => Number((await p.truth(v.address)).valueUsd);
  const usdc = () => (v.pool.token0.symbol === 'USDC' ? v.pool.token0 : v.pool.token1);
  const noDeadLetters = async () => {
    const ready = (await p.api.get('/ready')).body as { deadLetters: number };
    expect(ready.deadLetters).toBe(0);
    const s = await snapshot();
    expect(s.behind ?? null).toBeNull();
  };

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    v = await createVault(stack, stack.accounts.owners[0]!, stack.pools[0]!, 'total');
    await fundOwner(stack, v, 100n, 300_000n);
    p = await startChainPipeline(anvil, stack, 'total', { mark: { intervalBlocks: 0, minIntervalMs: 0 } });
    for (const t of [v.pool.token0, v.pool.token1])
      await write(stack.clients, v.owner, v.address, vaultAbi, 'deposit', [
        t.address,
        10n ** BigInt(t.decimals) * 10n,
      ]);
    await settle();
  }, 180_000);

  afterAll(async () => {
    await p?.stop();
    await anvil?.stop();
  });

  it('5 USDC sent straight to the vault, then the owner withdraws its whole USDC balance', async () => {
    const before = await snapshot();
    const t = usdc();
    const sent = await write(stack.clients, v.owner, t.address, testTokenAbi, 'transfer', [
      v.address,
      5n * 10n ** 6n,
    ]);
    await settle();
    const afterTransfer = await snapshot();
    // booked as capital in, not performance
    expect(afterTransfer.capitalInUsd - before.capitalInUsd).toBeCloseTo(5, 6);
    expect(afterTransfer.netUsd).toBeCloseTo(before.netUsd, 6);
    // A record of its own, at the transfer's log position, under the transfer's hash: nothing is
    // left for the block-end reconciliation.
    const [received] = await events('&type=transfer.received');
    expect(received).toMatchObject({
      type: 'transfer.received',
      txHash: sent.transactionHash,
      data: { from: v.owner.toLowerCase(), token: t.address.toLowerCase(), amount: '5000000' },
    });
    expect(await events('&type=balance.reconciled')).toEqual([]);

    const whole = await stack.clients.publicClient.readContract({
      address: t.address,
      abi: testTokenAbi,
      functionName: 'balanceOf',
      args: [v.address],
    });
    expect(whole).toBe(15n * 10n ** 6n);
    await write(stack.clients, v.owner, v.address, vaultAbi, 'withdraw', [t.address, whole]);
    await settle();
    const after = await snapshot();
    const [withdrawal] = await events('&type=withdrawal');
    expect(withdrawal).toMatchObject({
      type: 'withdrawal',
      data: { token: t.address.toLowerCase(), amount: whole.toString() },
    });
    expect(after.capitalOutUsd - afterTransfer.capitalOutUsd).toBeCloseTo(15, 6);
    expect(after.valueUsd).toBeCloseTo(await truth(), 2);
    expect(afterTransfer.valueUsd - after.valueUsd).toBeCloseTo(15, 2);
    await noDeadLetters();
  });

  it('fees collected after the position was closed go to idle; value follows the chain throughout', async () => {
    await write(stack.clients, v.owner, v.address, vaultAbi, 'deposit', [
      usdc().address,
      30_000n * 10n ** 6n,
    ]);
    const id = await openAround(stack, v, 600, 90n);
    await churn(stack, v.pool, 300);
    await churn(stack, v.pool, -300);
    await settle();
    const earning = await snapshot();
    expect(earning.uncollectedFeesUsd).toBeGreaterThan(0.01);
    expect(earning.valueUsd).toBeCloseTo(await truth(), 2);

    await close(stack, v, id);
    await settle();
    const closed = await snapshot();
    // the position is gone from `positions`, its owed fees are still in the value
    expect(closed.positions).toEqual([]);
    expect(closed.uncollectedFeesUsd).toBeGreaterThan(0.01);
    expect(closed.valueUsd).toBeCloseTo(await truth(), 2);

    const fees = await collectFees(stack, v, id);
    expect(fees.fee0 + fees.fee1).toBeGreaterThan(0n);
    await settle();
    const collected = await snapshot();
    expect(collected.uncollectedFeesUsd).toBe(0);
    expect(collected.valueUsd).toBeCloseTo(await truth(), 2);
    // collecting moves owed fees to idle: no value, no flow
    expect(collected.valueUsd).toBeCloseTo(closed.valueUsd, 2);
    expect(collected.capitalInUsd).toBe(closed.capitalInUsd);
    const rows = await events('&type=position.closed,fees.collected');
    expect(rows.map((r) => r.type)).toEqual(['fees.collected', 'position.closed']);
    expect(rows[0]!.data).toMatchObject({
      positionId: id.toString(),
      amount0: fees.fee0.toString(),
      amount1: fees.fee1.toString(),
    });
    // Nothing left unexplained (the first test's transfer has a record of its own).
    expect(await events('&type=balance.reconciled')).toEqual([]);
    await noDeadLetters();
  });
});
