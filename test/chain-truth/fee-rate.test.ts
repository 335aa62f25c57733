import { vaultAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  createVault,
  deployReferenceStack,
  fundOwner,
  movePrice,
  type ReferenceStack,
  setDefaultFeeRate,
  startAnvil,
  type TrackedVault,
  write,
} from '@vault-yield/devstack/chain';
import type { SnapshotView } from '@vault-yield/domain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChainPipeline, startChainPipeline } from './pipeline.js';

interface LedgerRow {
  type: string;
  txHash: string;
  blockNumber: number;
  data: Record<string, unknown>;
}

/**
 * The performance-fee rate is the vault's, read from the chain: a vault created while the
 * factory's default is 10 % has its whole fee (10 % of the gain) settle the high-water mark at the
 * post-fee value — at the service's former constant 20 %, the same charge would settle half that
 * gain and leave the mark far below. A rate the fee collector sets later is served as a
 * `fee.rate.set` row and settles the next charge at it. Indexer → Kafka → projector → Postgres →
 * reader, on anvil.
 */
describe('the performance-fee rate is chain truth', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let p: ChainPipeline;
  let v: TrackedVault;

  const snapshot = async () => {
    const r = await p.api.get(`/v1/vault/${v.address}/snapshot`);
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    return r.body as SnapshotView;
  };
  const events = async (type: string) => {
    const r = await p.api.get(`/v1/vault/${v.address}/events?type=${type}`);
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    return r.body as LedgerRow[];
  };
  const usdc = () => stack.tokens.usdc;
  /** Micro-USD of a served USD figure (a USDC raw unit at $1). */
  const micro = (usd: number) => BigInt(Math.round(usd * 1e6));
  /** The whole fee due at `bps` on the served snapshot, in USDC raw units (floor). */
  const feeDue = (s: SnapshotView, bps: number) =>
    ((micro(s.valueUsd) - micro(s.fees.highWaterUsd)) * BigInt(bps)) / 10_000n;
  const charge = (raw: bigint) =>
    write(stack.clients, stack.accounts.feeCollector, v.address, vaultAbi, 'chargePerformanceFee', [
      usdc().address,
      raw,
      stack.accounts.treasury,
    ]);

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    // The deployer is the factory's admin: new vaults start at 10 % from here on.
    await setDefaultFeeRate(stack, 1000);
    v = await createVault(stack, stack.accounts.owners[0]!, stack.pools[0]!, 'fee-rate');
    await fundOwner(stack, v, 10n, 100_000n);
    // 5 WETH at 3,000 and 15,000 USDC: 30,000, all idle (valued at the feeds' prices).
    await write(stack.clients, v.owner, v.address, vaultAbi, 'deposit', [
      stack.tokens.weth.address,
      5n * 10n ** 18n,
    ]);
    await write(stack.clients, v.owner, v.address, vaultAbi, 'deposit', [
      usdc().address,
      15_000n * 10n ** 6n,
    ]);
    // Marks at every price move: the snapshot shows the gain before the fee is charged on it.
    p = await startChainPipeline(anvil, stack, 'fee_rate', { mark: { intervalBlocks: 0, minIntervalMs: 0 } });
    await p.settle();
  }, 180_000);

  afterAll(async () => {
    await p?.stop();
    await anvil?.stop();
  });

  it('the vault was created at the factory default set before it (VaultCreated carries it)', async () => {
    const [created] = await events('vault.created');
    expect(created?.data).toMatchObject({ strategy: 'fee-rate', performanceFeeBps: 1000 });
    expect(
      await stack.clients.publicClient.readContract({
        address: v.address,
        abi: vaultAbi,
        functionName: 'performanceFeeBps',
      }),
    ).toBe(1000);
  });

  it('a 10 % vault charged 10 % of its gain has its mark at the post-fee value (at 20 % it would sit far below)', async () => {
    await movePrice(stack, stack.tokens.weth, 3600); // +600 × 5 WETH: a gain of 3,000
    await p.settle();
    const gained = await snapshot();
    expect(gained.valueUsd).toBeCloseTo(33_000, 4);
    expect(gained.fees.highWaterUsd).toBeCloseTo(30_000, 4);

    const fee = feeDue(gained, 1000);
    expect(fee).toBe(300n * 10n ** 6n);
    await charge(fee);
    await p.settle();
    const after = await snapshot();
    expect(after.fees.taxedUsd - gained.fees.taxedUsd).toBeCloseTo(300, 4);
    expect(after.valueUsd).toBeCloseTo(32_700, 4);
    // The whole fee due settled the whole gain: the mark is the value after paying for it.
    expect(Math.abs(after.fees.highWaterUsd - after.valueUsd)).toBeLessThan(0.05);
    // Settled at 20 %, 300 would settle a gain of 1,500 only: the mark at 31,200, 1,500 lower.
    const at20 = gained.fees.highWaterUsd + 300 / 0.2 - 300;
    expect(after.fees.highWaterUsd - at20).toBeGreaterThan(1000);
  });

  it('the fee collector sets the rate to 5 %: served as a fee.rate.set row of its transaction, the next charge settles at it', async () => {
    const set = await write(
      stack.clients,
      stack.accounts.feeCollector,
      v.address,
      vaultAbi,
      'setPerformanceFee',
      [500],
    );
    await p.settle();
    const rows = await events('fee.rate.set');
    expect(rows).toHaveLength(1);
    expect(rows[0]!.data).toEqual({ performanceFeeBps: 500 });
    expect(rows[0]!.txHash).toBe(set.transactionHash.toLowerCase());
    expect(rows[0]!.blockNumber).toBe(Number(set.blockNumber));

    await movePrice(stack, stack.tokens.weth, 3960); // +360 × 5 WETH: a gain of 1,800 over the mark
    await p.settle();
    const gained = await snapshot();
    expect(gained.valueUsd - gained.fees.highWaterUsd).toBeCloseTo(1800, 1);
    await charge(feeDue(gained, 500)); // 90 USDC
    await p.settle();
    const after = await snapshot();
    expect(after.valueUsd).toBeCloseTo(gained.valueUsd - 90, 1);
    expect(Math.abs(after.fees.highWaterUsd - after.valueUsd)).toBeLessThan(0.05);
  });
});
