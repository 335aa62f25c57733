import type { ChainClient } from '@vault-yield/chain';
import { vaultAuditorAbi, vaultAuditorRuntime } from '@vault-yield/contracts';
import { encodePacked, keccak256 } from 'viem';
import {
  auditFactoryAbi,
  auditFeedAbi,
  auditGaugeAbi,
  auditMintEvent,
  auditPoolAbi,
  auditTokenAbi,
  auditVaultAbi,
} from './abi.js';

type Address = `0x${string}`;

/** How the chain did the work: one eth_simulateV1, or an eth_call with the vault's code overridden. */
export type AuditPath = 'eth_simulateV1' | 'eth_call+override';
/** `auto`: eth_simulateV1, and the override call from the first answer saying the node lacks it. */
export type AuditMode = 'auto' | 'simulate' | 'call';

/** One token the vault holds once unwound, with its feed's answer at the block. */
export interface Holding {
  token: Address;
  decimals: number;
  feed: Address;
  feedDecimals: number;
  balance: bigint;
  answer: bigint;
}

/** What the chain says the vault holds at a block once it has unwound everything. */
export interface ChainHoldings {
  path: AuditPath;
  holdings: Holding[];
  /** Ranges burned and collected: the vault's live ones and those minted for it by others. */
  ranges: number;
  pendingRewards: bigint;
}

/** The vault cannot be valued from the chain for a reason that is no difference (no feed, a bad answer). */
export class NotComparable extends Error {
  override name = 'NotComparable';
}

/** The chain refused a step of the unwinding (a revert): the vault is not audited. */
export class UnwindFailed extends Error {
  override name = 'UnwindFailed';
}

const MAX_UINT128 = 2n ** 128n - 1n;

/** What is read before the unwinding, plainly, at the block. */
interface VaultState {
  vault: Address;
  pool: Address;
  gauge: Address;
  rewardToken: Address;
  pendingRewards: bigint;
  ranges: { lower: number; upper: number; liquidity: bigint }[];
  tokens: { token: Address; decimals: number; feed: Address; feedDecimals: number }[];
}

/** Whether an RPC error says the node does not know eth_simulateV1 (then the override call is used). */
function lacksSimulate(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (code === -32601 || code === -32004) return true;
    if (
      /eth_simulateV1/i.test(e.message) &&
      /not (found|supported|available)|unsupported|unknown/i.test(e.message)
    )
      return true;
    if (/method not (found|supported)|does not exist/i.test(e.message)) return true;
  }
  return false;
}

/**
 * Values nothing: it asks the chain what a vault holds at a block once the pool has burned and
 * collected every live position as the vault and the gauge has paid its pending rewards, and what
 * each token's feed answers. One eth_simulateV1 on top of the block (calls from the vault), or,
 * where the node lacks it, an eth_call at the block with VaultAuditor as the vault's code.
 */
export function createChainAuditor(client: ChainClient, mode: AuditMode = 'auto', startBlock?: bigint) {
  let simulate = mode !== 'call';

  async function stateAt(vault: Address, blockNumber: bigint): Promise<VaultState> {
    const at = { address: vault, abi: auditVaultAbi, blockNumber } as const;
    const [pool, token0, token1, rewardToken, gauge, factory, pendingRewards, live] = await Promise.all([
      client.readContract({ ...at, functionName: 'pool' }),
      client.readContract({ ...at, functionName: 'token0' }),
      client.readContract({ ...at, functionName: 'token1' }),
      client.readContract({ ...at, functionName: 'rewardToken' }),
      client.readContract({ ...at, functionName: 'gauge' }),
      client.readContract({ ...at, functionName: 'factory' }),
      client.readContract({ ...at, functionName: 'pendingRewards' }),
      client.readContract({ ...at, functionName: 'livePositions' }),
    ]);
    const [, lowers, uppers] = live;
    const minted = await mintedRanges(vault, pool, factory, blockNumber);
    const candidates = new Map<string, { lower: number; upper: number; live: boolean }>();
    for (const r of minted) candidates.set(`${r.lower}:${r.upper}`, { ...r, live: false });
    lowers.forEach((lower, i) => {
      const upper = uppers[i] ?? 0;
      candidates.set(`${lower}:${upper}`, { lower, upper, live: true });
    });
    const held = await Promise.all(
      [...candidates.values()].map(async (r) => {
        const key = keccak256(encodePacked(['address', 'int24', 'int24'], [vault, r.lower, r.upper]));
        const [liquidity, , , owed0, owed1] = await client.readContract({
          address: pool,
          abi: auditPoolAbi,
          functionName: 'positions',
          args: [key],
          blockNumber,
        });
        const holds = r.live || liquidity > 0n || owed0 > 0n || owed1 > 0n;
        return holds ? [{ lower: r.lower, upper: r.upper, liquidity }] : [];
      }),
    );
    const ranges = held.flat();
    const distinct = [...new Set([token0, token1, rewardToken].map((t) => t.toLowerCase() as Address))];
    const tokens = await Promise.all(distinct.map((token) => tokenAt(factory, token, blockNumber)));
    return { vault, pool, gauge, rewardToken, pendingRewards, ranges, tokens };
  }

  /**
   * Every range the pool minted for the vault up to the block (its Mint logs, owner = the vault):
   * the vault's own, and liquidity someone else minted for it, which the vault does not list but
   * owns in the pool. From START_BLOCK, else the factory's deployment block.
   */
  async function mintedRanges(vault: Address, pool: Address, factory: Address, blockNumber: bigint) {
    const fromBlock =
      startBlock ??
      (await client.readContract({
        address: factory,
        abi: auditFactoryAbi,
        functionName: 'deploymentBlock',
        blockNumber,
      }));
    const logs = await client.getLogs({
      address: pool,
      event: auditMintEvent,
      args: { owner: vault },
      fromBlock,
      toBlock: blockNumber,
      strict: true,
    });
    return logs.map((l) => ({ lower: l.args.tickLower, upper: l.args.tickUpper }));
  }

  async function tokenAt(factory: Address, token: Address, blockNumber: bigint) {
    const [decimals, feed] = await Promise.all([
      client.readContract({ address: token, abi: auditTokenAbi, functionName: 'decimals', blockNumber }),
      client.readContract({
        address: factory,
        abi: auditFactoryAbi,
        functionName: 'feedOf',
        args: [token],
        blockNumber,
      }),
    ]);
    if (/^0x0{40}$/i.test(feed)) throw new NotComparable(`token ${token} has no feed in the factory`);
    const feedDecimals = await client.readContract({
      address: feed,
      abi: auditFeedAbi,
      functionName: 'decimals',
      blockNumber,
    });
    return { token, decimals, feed: feed.toLowerCase() as Address, feedDecimals };
  }

  /** The unwinding as calls from the vault, then the reads, in one simulated block on top of `blockNumber`. */
  async function bySimulate(s: VaultState, blockNumber: bigint): Promise<Holding[]> {
    const from = { account: s.vault } as const;
    const burns = s.ranges
      .filter((r) => r.liquidity > 0n)
      .map((r) => ({
        ...from,
        to: s.pool,
        abi: auditPoolAbi,
        functionName: 'burn' as const,
        args: [r.lower, r.upper, r.liquidity] as const,
      }));
    const collects = s.ranges.map((r) => ({
      ...from,
      to: s.pool,
      abi: auditPoolAbi,
      functionName: 'collect' as const,
      args: [s.vault, r.lower, r.upper, MAX_UINT128, MAX_UINT128] as const,
    }));
    const pay =
      s.pendingRewards > 0n
        ? [
            {
              ...from,
              to: s.gauge,
              abi: auditGaugeAbi,
              functionName: 'pay' as const,
              args: [s.rewardToken, s.pendingRewards] as const,
            },
          ]
        : [];
    const balances = s.tokens.map((t) => ({
      to: t.token,
      abi: auditTokenAbi,
      functionName: 'balanceOf' as const,
      args: [s.vault] as const,
    }));
    const answers = s.tokens.map((t) => ({
      to: t.feed,
      abi: auditFeedAbi,
      functionName: 'latestRoundData' as const,
    }));
    const work = [...burns, ...collects, ...pay];
    const [block] = await client.simulateBlocks({
      blockNumber,
      blocks: [{ calls: [...work, ...balances, ...answers] }],
    });
    const results = block?.calls ?? [];
    results.forEach((r, i) => {
      if (r.status !== 'success') {
        const step = i < work.length ? `${work[i]?.functionName} on ${work[i]?.to}` : 'a read';
        throw new UnwindFailed(
          `${step} reverted in the simulation: ${r.error?.message.split('\n')[0] ?? r.data}`,
        );
      }
    });
    const n = s.tokens.length;
    const resultAt = (i: number): unknown => results[work.length + i]?.result;
    return s.tokens.map((t, i) => {
      const round = resultAt(n + i) as readonly bigint[] | undefined;
      return { ...t, balance: resultAt(i) as bigint, answer: round?.[1] ?? 0n };
    });
  }

  /** The same unwinding by VaultAuditor run as the vault's code (storage kept) in an eth_call at the block. */
  async function byOverride(s: VaultState, blockNumber: bigint): Promise<Holding[]> {
    try {
      const { result } = await client.simulateContract({
        address: s.vault,
        abi: vaultAuditorAbi,
        functionName: 'audit',
        args: [
          s.pool,
          s.ranges.map((r) => r.lower),
          s.ranges.map((r) => r.upper),
          s.gauge,
          s.rewardToken,
          s.pendingRewards,
          s.tokens.map((t) => t.token),
          s.tokens.map((t) => t.feed),
        ],
        blockNumber,
        stateOverride: [{ address: s.vault, code: vaultAuditorRuntime }],
      });
      const [balances, answers] = result;
      return s.tokens.map((t, i) => ({ ...t, balance: balances[i] ?? 0n, answer: answers[i] ?? 0n }));
    } catch (err) {
      const revert = (err as { name?: string }).name === 'ContractFunctionExecutionError';
      if (revert) throw new UnwindFailed(`the unwinding reverted: ${(err as Error).message.split('\n')[0]}`);
      throw err;
    }
  }

  return {
    /** The hash of the chain's block `n` (null when the node has none). */
    async blockHash(n: bigint): Promise<string | null> {
      const block = await client.getBlock({ blockNumber: n }).catch((err: unknown) => {
        if ((err as { name?: string }).name === 'BlockNotFoundError') return null;
        throw err;
      });
      return block?.hash ?? null;
    },
    /** The path the next vault is audited by (after a fallback: the override call). */
    path: (): AuditPath => (simulate ? 'eth_simulateV1' : 'eth_call+override'),
    async holdingsAt(vault: Address, blockNumber: bigint): Promise<ChainHoldings> {
      const s = await stateAt(vault, blockNumber);
      const done = (path: AuditPath, holdings: Holding[]): ChainHoldings => {
        for (const h of holdings)
          if (h.answer <= 0n)
            throw new NotComparable(
              `feed ${h.feed} of token ${h.token} answers no price (${h.answer}) at block ${blockNumber}`,
            );
        return { path, holdings, ranges: s.ranges.length, pendingRewards: s.pendingRewards };
      };
      if (simulate) {
        try {
          return done('eth_simulateV1', await bySimulate(s, blockNumber));
        } catch (err) {
          if (mode === 'simulate' || !lacksSimulate(err)) throw err;
          simulate = false;
        }
      }
      return done('eth_call+override', await byOverride(s, blockNumber));
    },
  };
}

export type ChainAuditor = ReturnType<typeof createChainAuditor>;
