import type { Address, Hash, Hex } from 'viem';
import type { ChainClient } from '../client/index.js';
import type { RawLog } from '../decode/types.js';
import { classifyRpcError, describeRpcError } from './errors.js';
import { type RetryOptions, withRetry } from './retry.js';

/** A log as the indexer uses it: the decoder's RawLog plus the block time when the node sends it. */
export type IndexerLog = RawLog & { blockTimestamp: number | null };

export interface LogFilter {
  /** Omitted = any address (topic filter only). */
  address?: readonly Address[];
  /** topic0 alternatives (OR). */
  topic0: readonly Hex[];
  /** topic1 alternatives (OR); omitted = any. */
  topic1?: readonly Hex[];
  /** topic2 alternatives (OR); omitted = any. */
  topic2?: readonly Hex[];
}

interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string | null;
  blockHash: string | null;
  blockTimestamp?: string | null;
  transactionHash: string | null;
  transactionIndex: string | null;
  logIndex: string | null;
  removed?: boolean;
}

const hex = (n: number) => `0x${n.toString(16)}`;
/**
 * A JSON-RPC quantity ("0x…") as a number: read by Number (no BigInt on the way) when it is hex
 * and whole; anything else goes through BigInt, which refuses what is no quantity.
 */
export function quantity(h: string): number {
  const n = h.length > 2 && h.charCodeAt(0) === 48 && h.charCodeAt(1) === 120 ? Number(h) : Number.NaN;
  return Number.isInteger(n) ? n : Number(BigInt(h));
}
const num = (h: string | null) => (h === null ? null : quantity(h));

function toLog(l: RpcLog): IndexerLog {
  return {
    address: l.address.toLowerCase() as Address,
    topics: l.topics as [Hex, ...Hex[]],
    data: l.data as Hex,
    blockNumber: l.blockNumber === null ? null : BigInt(l.blockNumber),
    blockHash: l.blockHash === null ? null : (l.blockHash.toLowerCase() as Hash),
    blockTimestamp: l.blockTimestamp ? quantity(l.blockTimestamp) : null,
    transactionHash: l.transactionHash === null ? null : (l.transactionHash.toLowerCase() as Hash),
    transactionIndex: num(l.transactionIndex),
    logIndex: num(l.logIndex),
    removed: l.removed ?? false,
  };
}

function filterParams(filter: LogFilter, block: Record<string, string>): Record<string, unknown> {
  const params: Record<string, unknown> = {
    ...block,
    topics: [filter.topic0.length === 1 ? filter.topic0[0] : [...filter.topic0]],
  };
  const topics = params.topics as unknown[];
  if (filter.topic1 || filter.topic2) topics.push(filter.topic1 ? [...filter.topic1] : null);
  if (filter.topic2) topics.push([...filter.topic2]);
  if (filter.address) params.address = filter.address.length === 1 ? filter.address[0] : [...filter.address];
  return params;
}

/** One eth_getLogs over [from, to] (inclusive), no retry, no split. */
export async function getLogsOnce(
  client: ChainClient,
  filter: LogFilter,
  from: number,
  to: number,
): Promise<IndexerLog[]> {
  const params = filterParams(filter, { fromBlock: hex(from), toBlock: hex(to) });
  const raw = (await client.request({
    method: 'eth_getLogs',
    params: [params] as never,
  })) as unknown as RpcLog[];
  return raw.map(toLog);
}

/**
 * eth_getLogs of one block named by hash (EIP-234), no retry: a node that has not got the block
 * refuses it ("unknown block": 'behind') where a range query past its head answers short.
 */
export async function getLogsByBlockHash(
  client: ChainClient,
  filter: LogFilter,
  blockHash: Hash,
): Promise<IndexerLog[]> {
  const raw = (await client.request({
    method: 'eth_getLogs',
    params: [filterParams(filter, { blockHash })] as never,
  })) as unknown as RpcLog[];
  return raw.map(toLog);
}

export interface AdaptiveLogsOptions extends RetryOptions {
  /** Ranges at or below this many blocks are not split further; their errors are thrown. */
  minRange?: number;
  /** Called when a range is split after the node refused it or timed out. */
  onSplit?: (info: { from: number; to: number; reason: string }) => void;
}

/**
 * eth_getLogs over [from, to], splitting the range in halves whenever the node refuses it (too
 * many results, range too large) or times out, and retrying transient failures with back-off.
 * Results come back in (blockNumber, logIndex) order. Throws after retries are spent, never
 * returns a partial range.
 */
export async function getLogsAdaptive(
  client: ChainClient,
  filter: LogFilter,
  from: number,
  to: number,
  opts: AdaptiveLogsOptions = {},
): Promise<IndexerLog[]> {
  const minRange = opts.minRange ?? 1;
  try {
    return await withRetry(() => getLogsOnce(client, filter, from, to), {
      ...opts,
      // Range refusals and timeouts are answered by splitting, not by asking again.
      retryOn:
        to - from + 1 > minRange
          ? ['rate-limit', 'transient', 'behind']
          : ['timeout', 'rate-limit', 'transient', 'behind'],
    });
  } catch (err) {
    const kind = classifyRpcError(err);
    if ((kind === 'range' || kind === 'timeout') && to - from + 1 > minRange) {
      const mid = from + Math.floor((to - from) / 2);
      opts.onSplit?.({ from, to, reason: describeRpcError(err) });
      // Both halves at once (the caller waits for the whole range either way), joined in order.
      const [left, right] = await Promise.all([
        getLogsAdaptive(client, filter, from, mid, opts),
        getLogsAdaptive(client, filter, mid + 1, to, opts),
      ]);
      return left.concat(right);
    }
    throw err;
  }
}
