import { testTokenAbi, vaultAbi, vaultFactoryAbi } from '@vault-yield/contracts';
import { type Address, encodeFunctionData, type Hex, toEventSelector } from 'viem';
import { devChain, type Rpc } from '../rpc.js';
import type { ReferenceStack } from './deploy.js';
import { floorTick, getLiquidityForAmounts, getSqrtRatioAtTick } from './math.js';
import { readSlot0 } from './prices.js';
import { strategyId } from './vault-ops.js';

export interface BulkOptions {
  vaults: number;
  /** Vault records per vault, counting VaultCreated and the two initial deposits (minimum 4). */
  eventsPerVault: number;
  /** Transactions sent per JSON-RPC batch and mined together (default 2000). */
  txsPerBlock?: number;
  /** Count events from the block receipts afterwards (default true; not part of `seconds`). */
  verify?: boolean;
  onProgress?: (sentTxs: number, totalTxs: number) => void;
}

export interface BulkResult {
  vaults: Address[];
  fromBlock: bigint;
  toBlock: bigint;
  txs: number;
  /** Vault records planned (VaultCreated + vault events). */
  plannedEvents: number;
  /** Vault records found by eth_getLogs, and planned − found (0 when every tx succeeded); only with verify. */
  events: number | null;
  missingEvents: number | null;
  /** Wall time to create, fund and drive the vaults (mint/approve included), excluding verify. */
  seconds: number;
  eventsPerSecond: number;
}

interface Tx {
  from: Address;
  to: Address;
  data: Hex;
  gas: bigint;
}

const hex = (n: bigint | number) => `0x${n.toString(16)}`;
const GAS_PRICE = 2_000_000_000n;
const MAX = (1n << 256n) - 1n;

/**
 * Generates many vault events fast: automine off, transactions sent by JSON-RPC batches of
 * eth_sendTransaction with explicit nonces (anvil signs for its unlocked accounts), then mined
 * with evm_mine until the pool drains; each block holds events of many vaults. No price moves:
 * every amount is computed once at the pool price. The block gas limit is raised to fit.
 * Vaults hold real positions in the stack's first Uniswap v3 pool (same range each, so the
 * pool's ticks are initialized once). Per vault: VaultCreated, 2 deposits, PositionOpened, then cycles of FeesCollected,
 * RewardsAccrued, PositionResized (+10%), RewardsClaimed, PositionResized (back), PositionRebalanced.
 */
export async function playBulk(stack: ReferenceStack, opts: BulkOptions): Promise<BulkResult> {
  if (opts.vaults < 1 || opts.eventsPerVault < 4)
    throw new Error('bulk needs ≥ 1 vault and ≥ 4 events per vault');
  const dev = devChain(stack.rpcUrl);
  const rpc = dev.rpc;
  const { agent, deployer, owners } = stack.accounts;
  const perBlock = opts.txsPerBlock ?? 2000;
  const pool = stack.pools[0]!;
  const { token0, token1 } = pool;
  const started = performance.now();

  await dev.setBlockGasLimit(4_000_000_000n);
  const fromBlock = (await dev.blockNumber()) + 1n;
  const nonces = new Map<Address, bigint>();
  for (const a of [agent, deployer, ...owners]) {
    nonces.set(a, BigInt(await rpc.call<string>('eth_getTransactionCount', [a, 'pending'])));
  }
  let sent = 0;
  let total = 0;
  const progress = (n: number) => {
    sent += n;
    opts.onProgress?.(sent, total);
  };
  await dev.setAutomine(false);
  try {
    // Phase 1: vaults (created by their owners), owners' tokens.
    const ownerOf = (i: number) => owners[i % owners.length]!;
    const phase1: Tx[] = [];
    for (let i = 0; i < opts.vaults; i++) {
      phase1.push(
        call(ownerOf(i), stack.factory, vaultFactoryAbi, 'createVault', [
          ownerOf(i),
          agent,
          strategyId(`bulk-${i % 7}`),
          token0.address,
          token1.address,
          pool.address,
          stack.tokens.rwd.address,
        ]),
      );
    }
    const dep0 = 1000n * 10n ** BigInt(token0.decimals);
    const dep1 = 1000n * 10n ** BigInt(token1.decimals) * 3000n;
    for (const o of new Set(owners.slice(0, Math.min(owners.length, opts.vaults)))) {
      const n = BigInt(opts.vaults);
      phase1.push(call(deployer, token0.address, testTokenAbi, 'mint', [o, dep0 * n]));
      phase1.push(call(deployer, token1.address, testTokenAbi, 'mint', [o, dep1 * n]));
    }
    total = phase1.length + opts.vaults * (opts.eventsPerVault - 1 + 2);
    await sendAndMine(rpc, dev, phase1, nonces, perBlock, progress);

    const count = await rpc.call<string>('eth_call', [
      { to: stack.factory, data: encodeFunctionData({ abi: vaultFactoryAbi, functionName: 'vaultCount' }) },
      'latest',
    ]);
    const first = BigInt(count) - BigInt(opts.vaults);
    const vaultWords = await rpc.batch<Hex>(
      Array.from({ length: opts.vaults }, (_, i) => ({
        method: 'eth_call',
        params: [
          {
            to: stack.factory,
            data: encodeFunctionData({
              abi: vaultFactoryAbi,
              functionName: 'vaults',
              args: [first + BigInt(i)],
            }),
          },
          'latest',
        ],
      })),
    );
    const vaults = vaultWords.map((w) => `0x${w.slice(26)}` as Address);
    // Blocks order the owners' createVault txs by sender, not by submission: ask each vault.
    const ownerWords = await rpc.batch<Hex>(
      vaults.map((v) => ({
        method: 'eth_call',
        params: [{ to: v, data: encodeFunctionData({ abi: vaultAbi, functionName: 'owner' }) }, 'latest'],
      })),
    );
    const vaultOwner = ownerWords.map((w) => `0x${w.slice(26)}` as Address);

    // Phase 2: approvals and deposits (owners), then the agent's cycles, interleaved by vault.
    const phase2: Tx[] = [];
    vaults.forEach((v, i) => {
      phase2.push(call(vaultOwner[i]!, token0.address, testTokenAbi, 'approve', [v, MAX]));
      phase2.push(call(vaultOwner[i]!, token1.address, testTokenAbi, 'approve', [v, MAX]));
    });
    vaults.forEach((v, i) => {
      phase2.push(call(vaultOwner[i]!, v, vaultAbi, 'deposit', [token0.address, dep0]));
      phase2.push(call(vaultOwner[i]!, v, vaultAbi, 'deposit', [token1.address, dep1]));
    });
    await sendAndMine(rpc, dev, phase2, nonces, perBlock, progress);

    const { sqrtPriceX96: sp, tick } = await readSlot0(stack, pool.address);
    const tickLower = floorTick(tick - 600, pool.tickSpacing);
    const tickUpper = floorTick(tick + 600, pool.tickSpacing) + pool.tickSpacing;
    const sa = getSqrtRatioAtTick(tickLower);
    const sb = getSqrtRatioAtTick(tickUpper);
    const liq = getLiquidityForAmounts(sp, sa, sb, dep0 / 2n, dep1 / 2n);
    const reward = 10n ** 18n;
    // The pool computes every amount: the vault pays mints from idle (half of the deposits go
    // in, the +10% resize and the rebalance back into the same range fit in the other half).
    const cycle: ((v: Address) => Tx)[] = [
      (v) => call(agent, v, vaultAbi, 'collectFees', [1n]),
      (v) => call(agent, v, vaultAbi, 'accrueRewards', [reward]),
      (v) => call(agent, v, vaultAbi, 'resizePosition', [1n, (liq * 11n) / 10n]),
      (v) => call(agent, v, vaultAbi, 'claimRewards', [reward]),
      (v) => call(agent, v, vaultAbi, 'resizePosition', [1n, liq]),
      (v) => call(agent, v, vaultAbi, 'rebalancePosition', [1n, tickLower, tickUpper, liq]),
    ];
    const phase3: Tx[] = vaults.map((v) =>
      call(agent, v, vaultAbi, 'openPosition', [tickLower, tickUpper, liq]),
    );
    for (let k = 0; k < opts.eventsPerVault - 4; k++) {
      for (const v of vaults) phase3.push(cycle[k % cycle.length]!(v));
    }
    await sendAndMine(rpc, dev, phase3, nonces, perBlock, progress);

    const seconds = (performance.now() - started) / 1000;
    const toBlock = await dev.blockNumber();
    const plannedEvents = opts.vaults * opts.eventsPerVault;
    const txs = phase1.length + phase2.length + phase3.length;
    let events: number | null = null;
    let missingEvents: number | null = null;
    if (opts.verify ?? true) {
      events = await countFromLogs(rpc, stack.factory, vaults, fromBlock, toBlock);
      missingEvents = plannedEvents - events;
    }
    return {
      vaults,
      fromBlock,
      toBlock,
      txs,
      plannedEvents,
      events,
      missingEvents,
      seconds,
      eventsPerSecond: plannedEvents / seconds,
    };
  } finally {
    await dev.setAutomine(true);
  }
}

function call(
  from: Address,
  to: Address,
  abi: readonly unknown[],
  functionName: string,
  args: readonly unknown[],
): Tx {
  const data = encodeFunctionData({ abi, functionName, args } as Parameters<typeof encodeFunctionData>[0]);
  // createVault deploys a Vault (~3M gas); pool mints/burns that initialize ticks stay under 1M.
  return { from, to, data, gas: functionName === 'createVault' ? 6_000_000n : 1_000_000n };
}

async function sendAndMine(
  rpc: Rpc,
  dev: ReturnType<typeof devChain>,
  txs: Tx[],
  nonces: Map<Address, bigint>,
  perBlock: number,
  progress: (sentInChunk: number) => void,
): Promise<void> {
  for (let i = 0; i < txs.length; i += perBlock) {
    const chunk = txs.slice(i, i + perBlock).map((t) => {
      const nonce = nonces.get(t.from) ?? 0n;
      nonces.set(t.from, nonce + 1n);
      return {
        method: 'eth_sendTransaction',
        params: [
          {
            from: t.from,
            to: t.to,
            data: t.data,
            gas: hex(t.gas),
            gasPrice: hex(GAS_PRICE),
            nonce: hex(nonce),
          },
        ],
      };
    });
    await rpc.batch(chunk);
    await drain(dev);
    progress(chunk.length);
  }
}

/** Mines until the pool is empty; fails if transactions stay queued (a nonce gap). */
async function drain(dev: ReturnType<typeof devChain>): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    const s = await dev.txpoolStatus();
    if (s.pending === 0 && s.queued === 0) return;
    if (s.pending === 0) throw new Error(`${s.queued} transactions queued behind a nonce gap`);
    await dev.mineOne();
  }
  throw new Error('transaction pool did not drain');
}

/** Counts vault records with eth_getLogs (per block) and failed txs from the blocks' receipts roots
 * is too slow on anvil (eth_getBlockReceipts on 2000-tx blocks takes seconds): failures are
 * inferred as planned − found by the caller. */
async function countFromLogs(
  rpc: Rpc,
  factory: Address,
  vaults: Address[],
  fromBlock: bigint,
  toBlock: bigint,
): Promise<number> {
  const created = toEventSelector(
    vaultFactoryAbi.find((e) => e.type === 'event' && e.name === 'VaultCreated')!,
  );
  const calls = [];
  for (let b = fromBlock; b <= toBlock; b++) {
    calls.push({
      method: 'eth_getLogs',
      params: [{ fromBlock: hex(b), toBlock: hex(b), address: vaults }],
    });
    calls.push({
      method: 'eth_getLogs',
      params: [{ fromBlock: hex(b), toBlock: hex(b), address: factory, topics: [created] }],
    });
  }
  let events = 0;
  for (let i = 0; i < calls.length; i += 20) {
    const out = await rpc.batch<unknown[]>(calls.slice(i, i + 20));
    for (const logs of out) events += logs.length;
  }
  return events;
}
