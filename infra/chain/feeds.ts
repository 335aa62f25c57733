import { mockAggregatorAbi } from '@vault-yield/contracts';
import { type Address, decodeFunctionResult, encodeFunctionData, type Hash, type Hex } from 'viem';
import { createRpc, type Rpc } from './rpc.js';

/**
 * The local chain's Chainlink-style feeds (MockAggregator) kept fresh the way a live feed is:
 * a new round with the same answer once the last one gets old by chain time. The indexer flags a
 * price whose feed's `updatedAt` is older than the feed's heartbeat at a record's block
 * (`FEED_HEARTBEAT_SECONDS`, default 3600, and `FEED_HEARTBEATS` per feed); these helpers take the
 * same two settings.
 */

/** The indexer's default feed heartbeat (`FEED_HEARTBEAT_SECONDS`), seconds. */
export const DEFAULT_FEED_HEARTBEAT_SECONDS = 3600;

/** Heartbeats as the indexer takes them: a default and per-feed overrides. */
export interface FeedHeartbeatOptions {
  /** Default heartbeat in seconds (`FEED_HEARTBEAT_SECONDS`); 3600 when omitted. */
  heartbeatSeconds?: number;
  /** Per-feed heartbeats in seconds by feed address, any case (`FEED_HEARTBEATS`). */
  heartbeats?: Record<string, number>;
}

/** The heartbeat of each feed under these options. Throws on a heartbeat that is not a positive integer. */
export function heartbeatOf(opts: FeedHeartbeatOptions = {}): (feed: Address) => number {
  const check = (s: number, what: string) => {
    if (!Number.isInteger(s) || s < 1)
      throw new Error(`${what}: a heartbeat is a positive whole number of seconds, got ${s}`);
    return s;
  };
  const fallback = check(opts.heartbeatSeconds ?? DEFAULT_FEED_HEARTBEAT_SECONDS, 'heartbeatSeconds');
  const byFeed = new Map(
    Object.entries(opts.heartbeats ?? {}).map(([f, s]) => [f.toLowerCase(), check(s, `heartbeats[${f}]`)]),
  );
  return (feed) => byFeed.get(feed.toLowerCase()) ?? fallback;
}

/** A feed's latest round (`latestRoundData`). */
export interface FeedRound {
  feed: Address;
  roundId: bigint;
  answer: bigint;
  /** Unix seconds. */
  updatedAt: number;
}

const hex = (n: bigint | number) => `0x${n.toString(16)}`;

/** Reads a feed's latest round at a block (default: the head). */
export async function readFeedRound(
  rpc: Rpc,
  feed: Address,
  block: bigint | 'latest' = 'latest',
): Promise<FeedRound> {
  const data = await rpc.call<Hex>('eth_call', [
    { to: feed, data: encodeFunctionData({ abi: mockAggregatorAbi, functionName: 'latestRoundData' }) },
    block === 'latest' ? block : hex(block),
  ]);
  const [roundId, answer, , updatedAt] = decodeFunctionResult({
    abi: mockAggregatorAbi,
    functionName: 'latestRoundData',
    data,
  });
  return { feed, roundId, answer, updatedAt: Number(updatedAt) };
}

/**
 * Chain time now (Unix seconds): the timestamp the next block gets — the pending block's, which
 * holds `evm_increaseTime` jumps and the wall clock that passed since the head on anvil — or the
 * head's where the node shows no pending block. An idle automining chain mines nothing, so its
 * head's timestamp alone would stand still.
 */
export async function chainTime(rpc: Rpc): Promise<number> {
  type Header = { timestamp: Hex } | null;
  const latest = await rpc.call<Header>('eth_getBlockByNumber', ['latest', false]);
  const pending = await rpc.call<Header>('eth_getBlockByNumber', ['pending', false]).catch(() => null);
  const ts = (h: Header) => (h ? Number(BigInt(h.timestamp)) : 0);
  return Math.max(ts(latest), ts(pending));
}

/** The rounds older than `fraction` of their feed's heartbeat at `now` (strictly). */
export function roundsDue(
  rounds: readonly FeedRound[],
  now: number,
  heartbeat: (feed: Address) => number,
  fraction = 0.5,
): FeedRound[] {
  return rounds.filter((r) => now - r.updatedAt > heartbeat(r.feed) * fraction);
}

/**
 * Sends `updateAnswer(answer)` — the round's own answer, so the price stays and only `updatedAt`
 * moves — from the feed's updater (an unlocked account of the node). Returns the hash without
 * waiting for a block (with automine off it waits in the pool).
 */
export async function sendSameAnswer(rpc: Rpc, round: FeedRound): Promise<Hash> {
  const updater = decodeFunctionResult({
    abi: mockAggregatorAbi,
    functionName: 'updater',
    data: await rpc.call<Hex>('eth_call', [
      { to: round.feed, data: encodeFunctionData({ abi: mockAggregatorAbi, functionName: 'updater' }) },
      'latest',
    ]),
  });
  return rpc.call<Hash>('eth_sendTransaction', [
    {
      from: updater,
      to: round.feed,
      data: encodeFunctionData({
        abi: mockAggregatorAbi,
        functionName: 'updateAnswer',
        args: [round.answer],
      }),
      gas: hex(200_000),
    },
  ]);
}

/**
 * Waits for a transaction's receipt (polling) and throws if it reverted, never lands in
 * `timeoutMs`, or `cancelled()` turns true meanwhile.
 */
export async function receiptBlock(
  rpc: Rpc,
  hash: Hash,
  timeoutMs = 60_000,
  cancelled: () => boolean = () => false,
): Promise<bigint> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (cancelled()) throw new Error(`stopped waiting for feed refresh ${hash}`);
    const r = await rpc.call<{ status: Hex; blockNumber: Hex } | null>('eth_getTransactionReceipt', [hash]);
    if (r) {
      if (BigInt(r.status) !== 1n) throw new Error(`feed refresh ${hash} reverted`);
      return BigInt(r.blockNumber);
    }
    if (Date.now() > end) throw new Error(`feed refresh ${hash} not mined within ${timeoutMs} ms`);
    await new Promise((res) => setTimeout(res, 20));
  }
}

/** What keepFeedsFresh reports: refreshes at `debug`, failures at `warn` (it goes on at the next interval). */
export type FeedKeeperLogger = (
  level: 'debug' | 'warn',
  message: string,
  fields: { feed?: Address; roundId?: string; blockNumber?: string; ageSeconds?: number; error?: unknown },
) => void;

export interface KeepFeedsFreshOptions extends FeedHeartbeatOptions {
  /** How often the feeds are checked (wall clock, ms); default 5000. */
  intervalMs?: number;
  /** Refreshes and failures; nothing is ever thrown out of the keeper. */
  logger?: FeedKeeperLogger;
}

export interface FeedKeeper {
  /** Stops checking; resolves once a check under way has finished (it stops waiting for a
   *  refresh's block; each request to the node is bounded by 10 s). Idempotent. */
  stop(): Promise<void>;
}

/** A node and its feeds, or anything holding them (a ReferenceStack). */
export type FeedTarget =
  | { rpcUrl: string; feeds: readonly Address[] }
  | { rpcUrl: string; tokens: Record<string, { feed: Address }> };

function feedsOf(target: FeedTarget): Address[] {
  const all = 'feeds' in target ? target.feeds : Object.values(target.tokens).map((t) => t.feed);
  return [...new Set(all.map((f) => f.toLowerCase() as Address))];
}

/**
 * Keeps a dev chain's feeds live: every `intervalMs` it reads each feed's latest round and, where
 * the round is older than half the feed's heartbeat by chain time (the next block's timestamp),
 * sends a new round with the same answer from the feed's updater, and waits for it. The chain's
 * mining mode is left alone (automine: a block per refresh; interval mining: the next block).
 * Nothing escapes: a failed check is logged through `logger` and tried again at the next interval.
 * For `vault-yield dev`, after the demo: the dashboard then never shows a price going stale only
 * because the demo's chain sat idle.
 */
export function keepFeedsFresh(target: FeedTarget, opts: KeepFeedsFreshOptions = {}): FeedKeeper {
  // Bounded requests: stop() waits for a check under way, never for a node that stopped answering.
  const rpc = createRpc(target.rpcUrl, { timeoutMs: 10_000 });
  const feeds = feedsOf(target);
  const heartbeat = heartbeatOf(opts);
  const intervalMs = opts.intervalMs ?? 5000;
  if (!Number.isFinite(intervalMs) || intervalMs < 1)
    throw new Error(`intervalMs must be ≥ 1, got ${intervalMs}`);
  const log: FeedKeeperLogger = (level, message, fields) => {
    try {
      opts.logger?.(level, message, fields);
    } catch {
      // A logger that throws must not stop the keeper.
    }
  };

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const check = async () => {
    const now = await chainTime(rpc);
    for (const feed of feeds) {
      if (stopped) return;
      try {
        const [round] = roundsDue([await readFeedRound(rpc, feed)], now, heartbeat);
        if (!round) continue;
        const block = await receiptBlock(rpc, await sendSameAnswer(rpc, round), 60_000, () => stopped);
        log('debug', 'feed refreshed with its current answer', {
          feed,
          roundId: (round.roundId + 1n).toString(),
          blockNumber: block.toString(),
          ageSeconds: now - round.updatedAt,
        });
      } catch (error) {
        if (stopped) return;
        log('warn', 'feed refresh failed; trying again at the next interval', { feed, error });
      }
    }
  };
  const loop = () => {
    if (stopped) return;
    running = check()
      .catch((error: unknown) =>
        log('warn', 'feed check failed; trying again at the next interval', { error }),
      )
      .finally(() => {
        if (stopped) return;
        timer = setTimeout(loop, intervalMs);
        timer.unref();
      });
  };
  loop();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

/**
 * The scenario's clock step: every feed whose round is older than half its heartbeat at the chain's
 * time now (the next block's) gets a new round with its current answer, all in one block mined at
 * once. The chain must be automining (the scenarios'); automine is on again afterwards. Returns
 * that block and the feeds refreshed, or null when none was due (no block is mined).
 */
export async function refreshDueFeeds(
  rpcUrl: string,
  feeds: readonly Address[],
  heartbeat: (feed: Address) => number,
): Promise<{ blockNumber: bigint; feeds: Address[] } | null> {
  const rpc = createRpc(rpcUrl);
  const now = await chainTime(rpc);
  const rounds = await Promise.all(feeds.map((f) => readFeedRound(rpc, f)));
  const due = roundsDue(rounds, now, heartbeat);
  if (due.length === 0) return null;
  const hashes: Hash[] = [];
  await rpc.call('evm_setAutomine', [false]);
  try {
    for (const r of due) hashes.push(await sendSameAnswer(rpc, r));
    await rpc.call('evm_mine');
  } finally {
    await rpc.call('evm_setAutomine', [true]);
  }
  const blocks = await Promise.all(hashes.map((h) => receiptBlock(rpc, h)));
  return { blockNumber: blocks[0]!, feeds: due.map((r) => r.feed) };
}
