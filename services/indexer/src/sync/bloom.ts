import {
  type BlockHeader,
  type BloomFilter,
  bloomMayMatch,
  compileBloomFilter,
  type IndexerLog,
  type LogFilter,
} from '@vault-yield/chain';

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

/** `logs` of `filter` over [from, to] with what the blooms of `headers` show was left out, in order. */
export async function completeByBloom(
  filter: LogFilter,
  logs: readonly IndexerLog[],
  headers: ReadonlyMap<number, BlockHeader>,
  from: number,
  to: number,
  byHash: (filter: LogFilter, blockHash: Hash) => Promise<IndexerLog[]>,
): Promise<{ logs: IndexerLog[]; missing: number }> {
  const { missing } = await recheckByBloom([{ filter, logs }], headers, from, to, byHash);
  const found = missing[0]!;
  if (found.length === 0) return { logs: [...logs], missing: 0 };
  const all = [...logs, ...found].sort(
    (a, b) => Number(a.blockNumber! - b.blockNumber!) || a.logIndex! - b.logIndex!,
  );
  return { logs: all, missing: found.length };
}
