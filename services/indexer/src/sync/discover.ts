import { decodeLog, type IndexerLog, readVaultRewardTokens } from '@vault-yield/chain';
import type { PriceReading } from '../price-watch.js';
import type { IndexerState } from '../state.js';
import { completeByBloom } from './bloom.js';
import type { IndexerContext } from './context.js';
import { factoryFilter, haltOnBadLog } from './fetch.js';
import { segmentFilters } from './filters.js';
import type { PriceReads } from './readings.js';
import type { PendingVault, Segment } from './types.js';

type Address = `0x${string}`;

/**
 * The discover stage: the factory's logs over a segment (completed by the blooms where it reaches
 * into the kept window), and what they bring in: the vaults it creates, their tokens and pools,
 * feed changes, and the log filters of its chunks (planSegment).
 */
export async function discover(
  ctx: IndexerContext,
  state: IndexerState,
  from: number,
  to: number,
  target: number,
): Promise<Segment> {
  const factoryLogs = await scanFactory(ctx, state, from, to, target);
  return planSegment(
    state,
    {
      prices: ctx.chain.prices,
      addressFilterLimit: ctx.options.addressFilterLimit,
      badLog: (log, reason) => haltOnBadLog(ctx, state, log, reason, from, to),
      rewardTokens: (vaults) => ctx.chain.rpc(() => readVaultRewardTokens(ctx.chain.client, vaults)),
    },
    factoryLogs,
    from,
    to,
    target,
  );
}

/** The factory's logs over [from, to], completed by the blooms where the range reaches into the kept window. */
async function scanFactory(
  ctx: IndexerContext,
  state: IndexerState,
  from: number,
  to: number,
  target: number,
): Promise<IndexerLog[]> {
  const logs = await ctx.chain.getLogs(factoryFilter(ctx.options), from, to, (f, t) =>
    state.ranges.refused(f, t),
  );
  const check = Math.max(from, target - ctx.options.reorgWindow + 1);
  if (check > to) return logs;
  const headers = await ctx.chain.headers(
    Array.from({ length: to - check + 1 }, (_, i) => check + i),
    true,
  );
  return completeByBloom(factoryFilter(ctx.options), logs, headers, check, to, ctx.chain.shortAnswers);
}

/** What planning a segment reads besides the state: the chain, through the engine's retries. */
export interface SegmentReads {
  readonly prices: PriceReads;
  readonly addressFilterLimit: number;
  /** Records the log as bad and throws (the indexer halts before it). */
  badLog(log: IndexerLog, reason: string): Promise<never>;
  /** Each vault's rewardToken() at its creation block. */
  rewardTokens(vaults: { vault: Address; blockNumber: number }[]): Promise<Address[]>;
}

/**
 * A segment from its factory logs: the vaults it creates (with their reward tokens), the state of
 * every token and pool it brings in (read at the first block that needs it, and again at each
 * FeedSet), and the log filters of its chunks.
 */
export async function planSegment(
  state: Pick<IndexerState, 'registry' | 'watch'>,
  h: SegmentReads,
  factoryLogs: IndexerLog[],
  from: number,
  to: number,
  target: number,
): Promise<Segment> {
  const pendingVaults = new Map<Address, PendingVault>();
  const feedSets: { token: Address; feed: Address; block: number }[] = [];
  for (const log of factoryLogs) {
    const r = decodeLog(log);
    if (!r.ok) return h.badLog(log, r.reason);
    if (r.kind === 'record' && r.record.type === 'vault.created') {
      const p = r.record.payload;
      if (state.registry.get(r.record.vault)) continue;
      pendingVaults.set(r.record.vault, {
        vault: r.record.vault,
        createdBlock: r.record.blockNumber,
        token0: p.token0,
        token1: p.token1,
        pool: p.pool,
        rewardToken: p.token0, // replaced below by the vault's own rewardToken()
      });
    } else if (r.kind === 'watched' && r.event.kind === 'feedSet') {
      feedSets.push({ token: r.event.token, feed: r.event.feed, block: r.event.blockNumber });
    }
  }
  // One deployless multicall per creation block instead of an eth_call per vault.
  const pending = [...pendingVaults.values()];
  if (pending.length > 0) {
    const tokens = await h.rewardTokens(
      pending.map((v) => ({ vault: v.vault, blockNumber: v.createdBlock })),
    );
    pending.forEach((v, i) => {
      v.rewardToken = tokens[i]!;
    });
  }
  // First block each new token / pool is needed at: read its state there.
  const newTokens = new Map<Address, number>();
  const newPools = new Map<Address, number>();
  for (const v of pendingVaults.values()) {
    for (const t of [v.token0, v.token1, v.rewardToken]) {
      if (!state.watch.hasToken(t))
        newTokens.set(t, Math.min(newTokens.get(t) ?? v.createdBlock, v.createdBlock));
    }
    if (!state.watch.hasPool(v.pool)) {
      newPools.set(v.pool, Math.min(newPools.get(v.pool) ?? v.createdBlock, v.createdBlock));
    }
  }
  const reads: Promise<PriceReading | null>[] = [];
  for (const [t, b] of newTokens) reads.push(h.prices.token(t, b));
  for (const [p, b] of newPools) reads.push(h.prices.pool(p, b));
  for (const fs of feedSets) {
    if (state.watch.hasToken(fs.token) || newTokens.has(fs.token))
      reads.push(h.prices.token(fs.token, fs.block));
  }
  const snapshots = new Map<number, PriceReading[]>();
  const feeds = new Set<Address>(state.watch.feedAddresses());
  const pools = new Set<Address>([...state.watch.poolAddresses(), ...newPools.keys()]);
  for (const s of await Promise.all(reads)) {
    if (!s) continue;
    const list = snapshots.get(s.block) ?? [];
    list.push(s);
    snapshots.set(s.block, list);
    if (s.kind === 'token') feeds.add(s.feed.feed);
  }
  const filters = segmentFilters({
    vaults: [...state.registry.byAddress.keys(), ...pendingVaults.keys()],
    valuation: [...pools, ...feeds],
    tokens: [...new Set([...state.watch.tokenAddresses(), ...newTokens.keys()])],
    limit: h.addressFilterLimit,
  });
  return { from, to, target, factoryLogs, pendingVaults, snapshots, filters };
}
