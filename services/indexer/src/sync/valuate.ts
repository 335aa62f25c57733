import type { IndexerLog, ValuedVault } from '@vault-yield/chain';
import type { ValuationContext, VaultRecord } from '@vault-yield/domain';
import type { StoredBlock } from '@vault-yield/store';
import { InconsistentRangeError, IndexerHaltError } from '../errors.js';
import type { IndexerState } from '../state.js';
import { storedVault, type VaultEntry } from '../vaults.js';
import { processBlock } from './block.js';
import { heartbeatOf, type IndexerContext } from './context.js';
import { assignSeqs } from './sequence.js';
import { type Batch, type FetchedChunk, ReorgDetected, type Segment } from './types.js';

type Address = `0x${string}`;
type Hash = `0x${string}`;

/**
 * The valuate stage: a fetched chunk becomes a batch. Its blocks are walked in order (block.ts
 * decides each block's records and moves the vaults' mark states and the price watch), the
 * records numbered per vault (sequence.ts) and given the chain's state at their block
 * (valuateRecords), the kept window's rows made; the batch checkpoints at the chunk's last block.
 * Throws ReorgDetected when the chunk does not chain to the last one prepared.
 */
export async function valuateChunk(
  ctx: IndexerContext,
  state: IndexerState,
  seg: Segment,
  chunk: FetchedChunk,
): Promise<Batch> {
  const first = chunk.headers.get(chunk.from);
  if (first && state.tip.hash && first.parentHash !== state.tip.hash) {
    throw new ReorgDetected(
      `block ${chunk.from} parent ${first.parentHash} ≠ hash ${state.tip.hash} of block ${state.tip.number}`,
    );
  }
  const { records, changed, touchedBy } = await walkChunk(ctx, state, seg, chunk);
  const entry = (vault: Address) => {
    const v = state.registry.get(vault) ?? state.aheadVaults.get(vault);
    if (!v) throw new IndexerHaltError(`record for vault ${vault} unknown to the registry`);
    return v;
  };
  const seqs = assignSeqs(records, (vault) => entry(vault).state);
  await valuateAll(ctx, state, records, entry);
  const kept = keptBlocks(chunk, seg.target - ctx.options.reorgWindow + 1, touchedBy);
  const last = chunk.headers.get(chunk.to)!;

  const vaults = [...changed].map((v) => storedVault(state.registry.get(v)!));
  state.tip = { number: chunk.to, hash: last.hash };
  return {
    records,
    kept,
    vaults,
    born: vaults.filter((v) => v.createdBlock >= chunk.from && v.createdBlock <= chunk.to),
    seqs,
    checkpoint: { number: chunk.to, hash: last.hash },
    timing: { saveMs: 0, publishMs: 0 },
  };
}

/** Walks the chunk's blocks in order: those with logs, with price readings, and its last one. */
async function walkChunk(ctx: IndexerContext, state: IndexerState, seg: Segment, chunk: FetchedChunk) {
  const records: VaultRecord[] = [];
  const changed = new Set<Address>();
  const touchedBy = new Map<number, Set<Address>>();
  const byBlock = new Map<number, IndexerLog[]>();
  for (const l of chunk.logs) {
    const n = Number(l.blockNumber);
    const list = byBlock.get(n) ?? [];
    byBlock.set(n, list);
    list.push(l);
  }
  for (const b of seg.snapshots.keys())
    if (b >= chunk.from && b <= chunk.to && !byBlock.has(b)) byBlock.set(b, []);
  // The chunk's last block is always walked (its header is at hand): triggers that depend on
  // time alone — a feed passing its heartbeat — fire even when no log arrives.
  if (!byBlock.has(chunk.to)) byBlock.set(chunk.to, []);
  const walk = {
    chainId: state.chainId,
    registry: state.registry,
    watch: state.watch,
    cadence: ctx.options.mark,
    heartbeatOf: heartbeatOf(ctx.options),
  };
  for (const b of [...byBlock.keys()].sort((x, y) => x - y)) {
    const logs = byBlock.get(b)!;
    const header = chunk.headers.get(b);
    const hash = (header?.hash ?? logs[0]?.blockHash) as Hash | undefined;
    const ts = header?.timestamp ?? logs[0]?.blockTimestamp ?? null;
    if (!hash || ts === null) {
      // A snapshot-only block without logs: fetch its header (rare).
      const h = (await ctx.chain.headers([b])).get(b);
      if (!h) throw new InconsistentRangeError(`block ${b} not returned by the node`);
      chunk.headers.set(b, h);
    }
    const out = processBlock(walk, {
      block: b,
      blockHash: (hash ?? chunk.headers.get(b)!.hash) as Hash,
      ts: ts ?? chunk.headers.get(b)!.timestamp,
      logs,
      decoded: chunk.decoded,
      pendingVaults: seg.pendingVaults,
      snapshots: seg.snapshots.get(b) ?? [],
    });
    for (const r of out.records) records.push(r);
    for (const v of out.changed) changed.add(v);
    if (out.touched.size > 0) touchedBy.set(b, out.touched);
  }
  return { records, changed, touchedBy };
}

/** Values the records at their blocks with the engine's valuator, counted in the state and metrics. */
async function valuateAll(
  ctx: IndexerContext,
  state: IndexerState,
  records: VaultRecord[],
  entry: (vault: Address) => VaultEntry,
): Promise<void> {
  const { rpc, valuator } = ctx.chain;
  state.totals.valuedBlocks += await valuateRecords(records, {
    read: (block, vaults, hash, ts) => rpc(() => valuator.read(block, vaults, hash, ts)),
    // Positions minted for the vault by someone else are read too (every range seen so far: one
    // the pool holds nothing for at a block reads as nothing there).
    vault: (vault) => {
      const v = entry(vault);
      const ranges = v.state.received;
      return ranges ? { ...v, ranges } : v;
    },
    concurrency: ctx.options.concurrency,
  });
  ctx.metrics.valuationCallsMade(valuator.calls);
}

/** The kept window's rows of the chunk: each block's hashes and the vaults it has records of. */
function keptBlocks(
  chunk: FetchedChunk,
  windowStart: number,
  touchedBy: ReadonlyMap<number, ReadonlySet<Address>>,
): StoredBlock[] {
  const kept: StoredBlock[] = [];
  for (let b = Math.max(chunk.from, windowStart); b <= chunk.to; b++) {
    const h = chunk.headers.get(b)!;
    kept.push({
      blockNumber: b,
      blockHash: h.hash,
      parentHash: h.parentHash,
      blockTimestamp: h.timestamp,
      vaults: [...(touchedBy.get(b) ?? [])].sort(),
    });
  }
  return kept;
}

export interface Valuation {
  /** Contexts by vault at a block, named by its hash too (BlockValuator.read, with the caller's retries). */
  read(
    block: number,
    vaults: readonly ValuedVault[],
    blockHash: `0x${string}`,
    /** The block's time (Unix seconds): a feed newer than it marks an answer of a later state. */
    blockTimestamp: number,
  ): Promise<Map<Address, ValuationContext>>;
  /** The valued set of a vault the records name. */
  vault(vault: Address): ValuedVault;
  /** Blocks read at once. */
  concurrency: number;
}

/**
 * Gives every record the chain's state at its block: one valuation read per block for all the
 * vaults it has records of (blocks in parallel, `concurrency` at a time). A vault's records in
 * one block share one context object; the last of them is `lastInBlock`.
 */
/** Returns how many blocks were read. */
export async function valuateRecords(records: readonly VaultRecord[], v: Valuation): Promise<number> {
  const byBlock = new Map<number, Map<Address, VaultRecord[]>>();
  for (const r of records) {
    const vaults = byBlock.get(r.blockNumber) ?? new Map<Address, VaultRecord[]>();
    byBlock.set(r.blockNumber, vaults);
    const list = vaults.get(r.vault) ?? [];
    vaults.set(r.vault, list);
    list.push(r);
  }
  const blocks = [...byBlock.entries()];
  let next = 0;
  const worker = async () => {
    while (next < blocks.length) {
      const [block, vaults] = blocks[next++]!;
      const first = vaults.values().next().value![0]!;
      const contexts = await v.read(
        block,
        [...vaults.keys()].map(v.vault),
        first.blockHash,
        first.blockTimestamp,
      );
      for (const [vault, list] of vaults) {
        const context = contexts.get(vault);
        if (!context) throw new Error(`invariant: no valuation of vault ${vault} at block ${block}`);
        list.forEach((r, i) => {
          r.context = context;
          r.lastInBlock = i === list.length - 1;
        });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(v.concurrency, blocks.length) }, worker));
  return blocks.length;
}
