import {
  type BlockHeader,
  type DecodeLogResult,
  decodeLog,
  eventTopics,
  type IndexerLog,
  type LogFilter,
  refOf,
} from '@vault-yield/chain';
import { ZERO_HASH } from '@vault-yield/domain';
import type { ResolvedIndexerConfig } from '../config.js';
import { BadLogError, InconsistentRangeError } from '../errors.js';
import type { IndexerState } from '../state.js';
import { missingChunkLogs } from './bloom.js';
import type { IndexerContext } from './context.js';
import { uniqueLogs } from './filters.js';
import { FACTORY_TOPICS, type FetchedChunk, type Segment } from './types.js';

type Address = `0x${string}`;

/** The factory's events (a new filter each time, as every scan of them asks). */
export const factoryFilter = (o: Pick<ResolvedIndexerConfig, 'factory'>): LogFilter => ({
  address: [o.factory],
  topic0: FACTORY_TOPICS,
});

/**
 * The fetch stage: one range of a segment — its logs (every filter of the segment, the factory's
 * from the segment's scan, each log once), the headers it needs, checked (checkConsistency) and
 * decoded (decodeAll) before any state moves. A range that does not check out is fetched again,
 * twice; then an inconsistent one fails the step, and a log that does not decode halts the indexer.
 */
export async function fetchChunk(
  ctx: IndexerContext,
  state: IndexerState,
  seg: Segment,
  from: number,
  to: number,
): Promise<FetchedChunk> {
  for (let attempt = 0; ; attempt++) {
    const { logs, headers, split } = await readChunk(ctx, state, seg, from, to);
    const problem = checkConsistency(logs, headers, from, to);
    const decoded = problem
      ? null
      : decodeAll(
          logs,
          ctx.options.factory,
          (a) => state.registry.get(a) !== undefined || seg.pendingVaults.has(a),
        );
    if (!problem && decoded && decoded.failures.length === 0)
      return { from, to, logs, decoded: decoded.map, headers, split };
    if (attempt < 2) {
      if (problem) ctx.metrics.inconsistentRanges.inc();
      ctx.log.warn({ from, to, attempt, problem, badLogs: decoded?.failures.length }, 'refetching log range');
      continue;
    }
    if (problem) throw new InconsistentRangeError(`range ${from}..${to}: ${problem}`);
    const bad = decoded!.failures[0]!;
    return haltOnBadLog(ctx, state, bad.log, bad.reason, from, to);
  }
}

/** A range's logs in order, each once, with the headers the checks and the walk need. */
async function readChunk(
  ctx: IndexerContext,
  state: IndexerState,
  seg: Segment,
  from: number,
  to: number,
): Promise<Pick<FetchedChunk, 'logs' | 'headers' | 'split'>> {
  let split = false;
  const lists = await Promise.all(
    seg.filters.map((f) =>
      ctx.chain.getLogs(f, from, to, (rf, rt) => {
        state.ranges.refused(rf, rt);
        split = true;
      }),
    ),
  );
  let logs: IndexerLog[] = [];
  for (const l of seg.factoryLogs) {
    const n = Number(l.blockNumber);
    if (n >= from && n <= to) logs.push(l);
  }
  for (const list of lists) for (const l of list) logs.push(l);
  logs.sort((a, b) => Number(a.blockNumber! - b.blockNumber!) || a.logIndex! - b.logIndex!);
  // A transfer between two vaults answers two filters (to a vault, from a vault): once.
  logs = uniqueLogs(logs);

  // Headers: every block of the kept window (parent-hash chain), the last block (checkpoint
  // hash), and any block whose logs came without a timestamp.
  const want = new Set<number>([to]);
  const windowStart = seg.target - ctx.options.reorgWindow + 1;
  for (let b = Math.max(from, windowStart); b <= to; b++) want.add(b);
  for (const l of logs) if (l.blockTimestamp === null) want.add(Number(l.blockNumber));
  const headers = await ctx.chain.headers(
    [...want].sort((a, b) => a - b),
    true,
  );
  const short = await missingChunkLogs(
    { from, to, filters: seg.filters, lists },
    { filter: factoryFilter(ctx.options), logs: seg.factoryLogs },
    headers,
    ctx.chain.shortAnswers,
  );
  if (short.length > 0) {
    for (const l of short) logs.push(l);
    logs.sort((a, b) => Number(a.blockNumber! - b.blockNumber!) || a.logIndex! - b.logIndex!);
    logs = uniqueLogs(logs);
  }
  return { logs, headers, split };
}

/** Records a watched log that does not decode (indexer_bad_logs) and halts before it. */
export async function haltOnBadLog(
  ctx: IndexerContext,
  state: IndexerState,
  log: IndexerLog,
  reason: string,
  from: number,
  to: number,
): Promise<never> {
  ctx.metrics.badLogs.inc();
  const ref = refOf(log);
  ctx.log.error({ log: ref, reason, range: { from, to } }, 'log does not decode: halting before it');
  await ctx.store
    .recordBadLog({
      chainId: state.chainId,
      blockNumber: ref.blockNumber ?? -1,
      blockHash: ref.blockHash ?? ZERO_HASH,
      txHash: ref.txHash ?? ZERO_HASH,
      logIndex: ref.logIndex ?? -1,
      address: ref.address,
      topic0: ref.topic0,
      reason,
      log: {
        ...ref,
        topics: log.topics,
        data: log.data,
        transactionIndex: log.transactionIndex,
      },
    })
    .catch((err: unknown) => ctx.log.error({ err }, 'could not record the bad log'));
  throw new BadLogError(
    `log ${ref.txHash}:${ref.logIndex} of ${ref.address} in block ${ref.blockNumber} (${ref.blockHash}) does not decode: ${reason}. ` +
      `The indexer stopped at checkpoint ${state.cursor.number} and will not publish past it; ` +
      'fix the decoder or the contract list, then restart (see indexer_bad_logs).',
  );
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
        reason: `vault log decoded as ${r.kind === 'watched' ? r.event.kind : r.record.type}`,
      });
      continue;
    }
    map.set(l, r);
  }
  return { map, failures };
}
