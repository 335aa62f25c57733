import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testTokenAbi, vaultFactoryAbi } from '@vault-yield/contracts';
import {
  type AnvilInstance,
  deploy,
  deployReferenceStack,
  openAround,
  type ReferenceStack,
  readSlot0,
  startAnvil,
  strategyId,
  type TrackedVault,
  write,
} from '@vault-yield/devstack/chain';
import { getLiquidityForAmounts, getSqrtRatioAtTick, type SnapshotView } from '@vault-yield/domain';
import solc from 'solc';
import { type Address, decodeEventLog, type Hex, parseAbi } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChainPipeline, startChainPipeline } from './pipeline.js';

const helperAbi = parseAbi([
  'function selectAndMint(address vault, bytes32 strategy, address pool, address[] owners, int24[] lowers, int24[] uppers, uint128[] liquidities)',
]);

const floorTick = (tick: number, spacing: number) => Math.floor(tick / spacing) * spacing;

/** OwnerAndMinter's creation code, compiled here with solc-js (test-only, as FeeProbe). */
function helperCode(): Hex {
  const source = readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'OwnerAndMinter.sol'), 'utf8');
  const out = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'OwnerAndMinter.sol': { content: source } },
        settings: {
          evmVersion: 'cancun',
          optimizer: { enabled: true, runs: 200 },
          outputSelection: { '*': { '*': ['evm.bytecode.object'] } },
        },
      }),
    ),
  ) as {
    contracts?: Record<string, Record<string, { evm: { bytecode: { object: string } } }>>;
    errors?: { severity: string; formattedMessage: string }[];
  };
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  return `0x${out.contracts!['OwnerAndMinter.sol']!.OwnerAndMinter!.evm.bytecode.object}`;
}

/**
 * Liquidity minted for a vault by someone else inside a transaction where the vault also emits an
 * event (#43 item 8a): the chain says whose a position is (the pool key's owner). A contract that
 * owns the vault selects a strategy (the vault's event) and, in the same transaction, mints in the
 * vault's pool for the vault (a new range, and the vault's live range) and for itself. The vault's
 * value is what the chain holds for it — its positions, the gifts included, never the minter's
 * own — and what the gifts cost is capital in, not a gain.
 */
describe('liquidity minted for a vault by someone else in a transaction with a vault event', () => {
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let p: ChainPipeline;
  let helper: Address;
  let v: TrackedVault;

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    const { deployer, agent } = stack.accounts;
    helper = await deploy(stack.clients, deployer, helperAbi, helperCode(), []);
    const pool = stack.pools[0]!;
    const r = await write(stack.clients, deployer, stack.factory, vaultFactoryAbi, 'createVault', [
      helper,
      agent,
      strategyId('gift-in-tx'),
      pool.token0.address,
      pool.token1.address,
      pool.address,
      stack.tokens.rwd.address,
    ]);
    let address: Address | undefined;
    for (const log of r.logs) {
      try {
        const e = decodeEventLog({ abi: vaultFactoryAbi, data: log.data, topics: log.topics });
        if (e.eventName === 'VaultCreated') address = e.args.vault.toLowerCase() as Address;
      } catch {
        // another contract's log
      }
    }
    v = {
      address: address!,
      owner: helper,
      pool,
      strategy: 'gift-in-tx',
      positions: new Map(),
      nextPositionId: 1n,
      pendingRewards: 0n,
    };
    // The vault's capital: tokens sent to it (transfer.received); the helper's: what it mints with.
    const whole = (t: typeof pool.token0, n: bigint) => n * 10n ** BigInt(t.decimals);
    for (const [t, n] of [
      [pool.token0, pool.token0.symbol === 'USDC' ? 20_000n : 10n],
      [pool.token1, pool.token1.symbol === 'USDC' ? 20_000n : 10n],
    ] as const) {
      await write(stack.clients, deployer, t.address, testTokenAbi, 'mint', [v.address, whole(t, n)]);
      await write(stack.clients, deployer, t.address, testTokenAbi, 'mint', [helper, whole(t, n)]);
    }
    p = await startChainPipeline(anvil, stack, 'gift_in_tx', {
      mark: { intervalBlocks: 0, minIntervalMs: 0 },
    });
  }, 180_000);

  afterAll(async () => {
    await p?.stop();
    await anvil?.stop();
  });

  it('is the vault’s where the chain says so, booked as capital in; the minter’s own liquidity is not the vault’s', async () => {
    const id = await openAround(stack, v, 600, 40n);
    await p.settle();
    const snap = async () => (await p.api.get(`/v1/vault/${v.address}/snapshot`)).body as SnapshotView;
    const before = await snap();
    expect(before.positions).toHaveLength(1);

    const { sqrtPriceX96: sp, tick } = await readSlot0(stack, v.pool.address);
    const s = v.pool.tickSpacing;
    const lo = floorTick(tick - 1500, s);
    const up = floorTick(tick + 1500, s) + s;
    const live = v.positions.get(id)!;
    const amount = (t: typeof v.pool.token0) =>
      t.symbol === 'USDC' ? 2_000n * 10n ** BigInt(t.decimals) : 10n ** BigInt(t.decimals);
    const L = getLiquidityForAmounts(
      sp,
      getSqrtRatioAtTick(lo),
      getSqrtRatioAtTick(up),
      amount(v.pool.token0),
      amount(v.pool.token1),
    );
    const Llive = getLiquidityForAmounts(
      sp,
      getSqrtRatioAtTick(live.tickLower),
      getSqrtRatioAtTick(live.tickUpper),
      amount(v.pool.token0) / 2n,
      amount(v.pool.token1) / 2n,
    );
    // One transaction: StrategySelected, a gift of a new range, the minter's own liquidity in the
    // same range, a gift into the vault's live range.
    await write(stack.clients, stack.accounts.deployer, helper, helperAbi, 'selectAndMint', [
      v.address,
      strategyId('gift-in-tx-2'),
      v.pool.address,
      [v.address, helper, v.address],
      [lo, lo, live.tickLower],
      [up, up, live.tickUpper],
      [L, L, Llive],
    ]);
    await p.settle();
    const after = await snap();
    expect(after.strategy).toBe('gift-in-tx-2');
    // The chain's own valuation of every position the pool holds for the vault (the minter's is
    // under its own key: not among them) agrees with what is served.
    const truth = await p.truth(v.address);
    expect(Math.abs(after.valueUsd - Number(truth.valueUsd))).toBeLessThan(1e-6);
    expect(after.valueUsd - before.valueUsd).toBeGreaterThan(2_000);
    // What the gifts cost is capital in; nothing of it reads as a gain.
    expect(after.capitalInUsd - before.capitalInUsd).toBeCloseTo(after.valueUsd - before.valueUsd, 2);
    expect(after.netUsd - before.netUsd).toBeCloseTo(0, 2);
    expect(after.positions).toHaveLength(2);
    const rows = (await p.api.get(`/v1/vault/${v.address}/events?type=position.received`)).body as {
      data: { tickLower: number; tickUpper: number; from: string; liquidity: string };
    }[];
    expect(
      rows.map((r) => [r.data.tickLower, r.data.tickUpper, r.data.liquidity, r.data.from]).sort(),
    ).toEqual(
      [
        [lo, up, String(L), helper],
        [live.tickLower, live.tickUpper, String(Llive), helper],
      ].sort(),
    );
  });
});
