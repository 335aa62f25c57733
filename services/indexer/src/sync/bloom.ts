import {
  type BlockHeader,
  type BloomFilter,
  bloomMayMatch,
  compileBloomFilter,
  type IndexerLog,
  type LogFilter,
} from '@vault-yield/chain';
import type { Logger } from '@vault-yield/common';
import { InconsistentRangeError } from '../errors.js';

type Hash = `0x${string}`;

/**
 * A node behind the head (one of several behind one URL) answers an eth_getLogs range that runs
 * past its head with the blocks it has: short, and without an error. Each block whose header is
 * at hand (the kept window and the range's last block: where a lagging node can be short) is
 * checked against the logs that came back: where its logsBloom says a filter may match but no log
 * of that filter came back, the block is asked again by hash (EIP-234), which a node without the
 * block refuses instead of answering empty.
 */

const compiled = new WeakMap<LogFilter, BloomFilter>();
const bloomFilterOf = (f: LogFilter) => {
  let b = compiled.get(f);
  if (!b) {
    b = compileBloomFilter(f);
    compiled.set(f, b);
  }
  return b;
};

/** Blocks in [from, to] with a header at hand whose bloom may match `filter` but that have none of `logs`. */
export function unansweredBlocks(
  filter: LogFilter,
  logs: readonly IndexerLog[],
  headers: ReadonlyMap<number, BlockHeader>,
  from: number,
  to: number,
): BlockHeader[] {
  const answered = new Set<number>();
  for (const l of logs) answered.add(Number(l.blockNumber));
  const bloom = bloomFilterOf(filter);
  const out: BlockHeader[] = [];
  for (const [n, h] of headers) {
    if (n < from || n > to || answered.has(n) || !h.logsBloom) continue;
    if (bloomMayMatch(h.logsBloom, bloom)) out.push(h);
  }
  return out.sort((a, b) => a.number - b.number);
}

export interface BloomRecheck {
  /** Logs the range answers lacked, per filter (same order as given). */
  missing: IndexerLog[][];
  /** Blocks asked again (bloom positives without logs; most are the bloom's false positives). */
  asked: number;
}

/** Asks every unanswered block again by hash; what comes back is what the range answers lacked. */
export async function recheckByBloom(
  checks: readonly { filter: LogFilter; logs: readonly IndexerLog[] }[],
  headers: ReadonlyMap<number, BlockHeader>,
  from: number,
  to: number,
  byHash: (filter: LogFilter, blockHash: Hash) => Promise<IndexerLog[]>,
): Promise<BloomRecheck> {
  let asked = 0;
  const missing = await Promise.all(
    checks.map(async ({ filter, logs }) => {
      const blocks = unansweredBlocks(filter, logs, headers, from, to);
      asked += blocks.length;
      const lists = await Promise.all(blocks.map((h) => byHash(filter, h.hash)));
      return lists.flat();
    }),
  );
  return { missing, asked };
}

/** What completing short answers needs from the indexer. */
export interface ShortAnswers {
  /** eth_getLogs of one block by hash, with the caller's retries. */
  byHash(filter: LogFilter, blockHash: Hash): Promise<IndexerLog[]>;
  log: Logger;
  /** Called once per range found short. */
  onShort(): void;
}

/** `logs` of `filter` over [from, to] with what the blooms of `headers` show was left out, in order. */
export async function completeByBloom(
  filter: LogFilter,
  logs: readonly IndexerLog[],
  headers: ReadonlyMap<number, BlockHeader>,
  from: number,
  to: number,
  d: ShortAnswers,
): Promise<IndexerLog[]> {
  const { missing } = await recheckByBloom([{ filter, logs }], headers, from, to, d.byHash);
  const found = missing[0]!;
  if (found.length === 0) return [...logs];
  d.onShort();
  d.log.warn(
    { from, to, missing: found.length },
    'logs came back short (a node behind the head?); completed by block hash',
  );
  return [...logs, ...found].sort(
    (a, b) => Number(a.blockNumber! - b.blockNumber!) || a.logIndex! - b.logIndex!,
  );
}

/**
 * The logs a chunk's range answers left out (its filters' `lists`, in order), found by `headers`'
 * blooms and asked again by hash. The chunk's factory logs come from its segment's scan (already
 * completed near the head): one missing there throws, and the step starts again from the checkpoint.
 */
export async function missingChunkLogs(
  chunk: { from: number; to: number; filters: readonly LogFilter[]; lists: readonly IndexerLog[][] },
  factory: { filter: LogFilter; logs: readonly IndexerLog[] },
  headers: ReadonlyMap<number, BlockHeader>,
  d: ShortAnswers,
): Promise<IndexerLog[]> {
  const { from, to } = chunk;
  const inRange = factory.logs.filter((l) => Number(l.blockNumber) >= from && Number(l.blockNumber) <= to);
  const { missing, asked } = await recheckByBloom(
    [
      ...chunk.filters.map((filter, i) => ({ filter, logs: chunk.lists[i]! })),
      { filter: factory.filter, logs: inRange },
    ],
    headers,
    from,
    to,
    d.byHash,
  );
  const factoryMissing = missing.pop()!;
  const found = missing.flat();
  if (asked > 0) d.log.debug({ from, to, asked, found: found.length }, 'bloom positives asked again by hash');
  if (found.length === 0 && factoryMissing.length === 0) return found;
  d.onShort();
  d.log.warn(
    { from, to, missing: found.length, factoryMissing: factoryMissing.length },
    'a log range came back short (a node behind the head?); completed by block hash',
  );
  if (factoryMissing.length > 0)
    throw new InconsistentRangeError(
      `range ${from}..${to}: ${factoryMissing.length} factory log(s) missing from the segment's scan (a node behind the head answered it)`,
    );
  return found;
}
