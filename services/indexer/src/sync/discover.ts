import { decodeLog, type IndexerLog } from '@vault-yield/chain';
import type { PriceReading, PriceWatch } from '../price-watch.js';
import type { VaultRegistry } from '../vaults.js';
import { segmentFilters } from './filters.js';
import type { PriceReads } from './readings.js';
import type { PendingVault, Segment } from './types.js';

type Address = `0x${string}`;

/** What discovery reads: the known vaults and valuation state, and the chain through the engine. */
export interface DiscoverHost {
  readonly registry: VaultRegistry;
  readonly watch: PriceWatch;
  readonly snapshots: PriceReads;
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
  h: DiscoverHost,
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
      if (h.registry.get(r.record.vault)) continue;
      pendingVaults.set(r.record.vault, {
        vault: r.record.vault,
        createdBlock: r.record.blockNumber,
        token0: p.token0,
        token1: p.token1,
        pool: p.pool,
        rewardToken: p.token0, // replaced below by the vault's own rewardToken()
      });
    } else if (r.kind === 'valuation' && r.event.kind === 'feedSet') {
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
      if (!h.watch.hasToken(t))
        newTokens.set(t, Math.min(newTokens.get(t) ?? v.createdBlock, v.createdBlock));
    }
    if (!h.watch.hasPool(v.pool)) {
      newPools.set(v.pool, Math.min(newPools.get(v.pool) ?? v.createdBlock, v.createdBlock));
    }
  }
  const reads: Promise<PriceReading | null>[] = [];
  for (const [t, b] of newTokens) reads.push(h.snapshots.token(t, b));
  for (const [p, b] of newPools) reads.push(h.snapshots.pool(p, b));
  for (const fs of feedSets) {
    if (h.watch.hasToken(fs.token) || newTokens.has(fs.token))
      reads.push(h.snapshots.token(fs.token, fs.block));
  }
  const snapshots = new Map<number, PriceReading[]>();
  const feeds = new Set<Address>(h.watch.feedAddresses());
  const pools = new Set<Address>([...h.watch.poolAddresses(), ...newPools.keys()]);
  for (const s of await Promise.all(reads)) {
    if (!s) continue;
    const list = snapshots.get(s.block) ?? [];
    list.push(s);
    snapshots.set(s.block, list);
    if (s.kind === 'token') feeds.add(s.feed.feed);
  }
  const filters = segmentFilters({
    vaults: [...h.registry.byAddress.keys(), ...pendingVaults.keys()],
    valuation: [...pools, ...feeds],
    tokens: [...new Set([...h.watch.tokenAddresses(), ...newTokens.keys()])],
    limit: h.addressFilterLimit,
  });
  return { from, to, target, factoryLogs, pendingVaults, snapshots, filters };
}
