import {
  type BlockHeader,
  type DecodeLogResult,
  decodeLog,
  eventTopics,
  type IndexerLog,
} from '@vault-yield/chain';
import type { FetchedChunk } from './types.js';

type Address = `0x${string}`;

/**
 * Sizes getLogs ranges by what came back: a range aims for `targetLogs` logs at the density of
 * the last chunk, grows at most twofold per chunk, shrinks when the node refuses one. A range
 * larger than any that came back whole (`provenSize`) is a growth probe and goes out alone, so a
 * density jump costs one refused range, not `concurrency` of them.
 */
export class RangePlanner {
  chunkSize: number;
  provenSize = 0;
  /** Logs per block of the last fetched chunk. */
  density = 0;

  constructor(
    private readonly maxBlockRange: number,
    /** Logs one range aims for: ≈ 5 MB of JSON at ≈ 650 bytes a log, a third of the logs client's cap. */
    readonly targetLogs = 8000,
  ) {
    this.chunkSize = Math.min(maxBlockRange, 10);
  }

  /** After a chunk came back: learn its density, grow (at most ×2) toward the target. */
  adapt(chunk: Pick<FetchedChunk, 'from' | 'to' | 'logs' | 'split'>): void {
    const blocks = chunk.to - chunk.from + 1;
    if (!chunk.split) this.provenSize = Math.max(this.provenSize, blocks);
    this.density = chunk.logs.length / blocks;
    const wanted = this.density > 0 ? Math.floor(this.targetLogs / this.density) : this.maxBlockRange;
    this.chunkSize = Math.max(1, Math.min(this.maxBlockRange, wanted, this.chunkSize * 2));
  }

  /** The node refused [from, to]: never ask that much again until a range comes back whole. */
  refused(from: number, to: number): void {
    this.chunkSize = Math.max(1, Math.min(this.chunkSize, Math.floor((to - from + 1) / 2)));
    this.provenSize = Math.min(this.provenSize, to - from);
  }

  /**
   * Whether another range of `chunkSize` may go out with `inFlight` ranges already out. Ranges are
   * consumed in order, and a node serves concurrent requests side by side: where blocks are dense,
   * more than about two chunks' worth of logs in flight only delays the one needed next.
   */
  mayDispatch(inFlight: readonly { from: number; to: number }[], concurrency: number): boolean {
    if (inFlight.length === 0) return true;
    if (inFlight.length >= concurrency) return false;
    if (this.chunkSize > this.provenSize) return false;
    const expected = (blocks: number) => blocks * this.density;
    const ahead = inFlight.reduce((n, c) => n + expected(c.to - c.from + 1), 0);
    return ahead + expected(this.chunkSize) <= 2 * this.targetLogs;
  }
}

/** Logs of one block must share the block's hash (and the header's, when fetched); headers must chain. */
export function checkConsistency(
  logs: readonly IndexerLog[],
  headers: ReadonlyMap<number, BlockHeader>,
  from: number,
  to: number,
): string | null {
  if (!headers.get(to)) return `block ${to} not returned by the node`;
  const seen = new Map<number, string>();
  for (const l of logs) {
    const n = Number(l.blockNumber);
    if (l.blockHash === null || l.removed)
      return `log ${l.transactionHash}:${l.logIndex} is pending or removed`;
    if (n < from || n > to) return `log of block ${n} outside the requested range ${from}..${to}`;
    const h = headers.get(n)?.hash ?? seen.get(n);
    if (h !== undefined && h !== l.blockHash)
      return `log of block ${n} has blockHash ${l.blockHash}, block has ${h}`;
    seen.set(n, l.blockHash);
  }
  // The fetched headers must chain (a reorg in the middle of the fetch breaks this).
  const nums = [...headers.keys()].sort((a, b) => a - b);
  for (let i = 1; i < nums.length; i++) {
    const a = headers.get(nums[i - 1]!)!;
    const b = headers.get(nums[i]!)!;
    if (b.number === a.number + 1 && b.parentHash !== a.hash)
      return `block ${b.number} does not chain to ${a.number}`;
  }
  return null;
}

/**
 * Decodes every watched log of a chunk before any state moves (a bad one stops the chunk). Logs
 * of addresses that are neither the factory, a vault nor a valuation topic (Swap, Mint, AnswerUpdated, Transfer) are not ours (topic-only
 * filters bring them); a valuation-topic log that does not decode from an untracked address neither.
 */
export function decodeAll(
  logs: readonly IndexerLog[],
  factory: Address,
  isVault: (address: Address) => boolean,
): { map: Map<IndexerLog, DecodeLogResult>; failures: { log: IndexerLog; reason: string }[] } {
  const map = new Map<IndexerLog, DecodeLogResult>();
  const failures: { log: IndexerLog; reason: string }[] = [];
  for (const l of logs) {
    const addr = l.address;
    const vault = isVault(addr);
    const topic0 = l.topics[0];
    const isValuation =
      topic0 === eventTopics.swap ||
      topic0 === eventTopics.answerUpdated ||
      topic0 === eventTopics.transfer ||
      topic0 === eventTopics.mint;
    if (addr !== factory && !vault && !isValuation) continue;
    const r = decodeLog(l);
    if (!r.ok) {
      if (!vault && addr !== factory) continue;
      failures.push({ log: l, reason: r.reason });
      continue;
    }
    if (vault && (r.kind !== 'record' || r.record.vault !== addr)) {
      failures.push({
        log: l,
        reason: `vault log decoded as ${r.kind === 'valuation' ? r.event.kind : r.record.type}`,
      });
      continue;
    }
    map.set(l, r);
  }
  return { map, failures };
}
