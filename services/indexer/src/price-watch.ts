import type { TokenFeedState, TokenInfo } from '@vault-yield/chain';
import type { PoolContext } from '@vault-yield/domain';

type Address = `0x${string}`;

interface TokenState {
  info: TokenInfo;
  feed: Address;
  feedDecimals: number;
  answer: bigint;
  /** The feed's updatedAt (Unix seconds) with that answer. */
  updatedAt: number;
  /** Events at or below this block are already in the state (it came from a read at this block). */
  asOf: number;
}

interface PoolState {
  ctx: PoolContext;
  asOf: number;
}

/** The token / pool set a vault is valued with. */
export interface ValuedSet {
  token0: Address;
  token1: Address;
  rewardToken: Address;
  pool: Address;
}

/** A state read at a block (end of block), applied after that block's events. */
export type PriceReading =
  | { kind: 'token'; block: number; info: TokenInfo; feed: TokenFeedState }
  | { kind: 'pool'; block: number; pool: PoolContext };

const ZERO = '0x0000000000000000000000000000000000000000';

/**
 * The price watch: price moves tracked from events, to decide when vaults fall due for a mark: pool price and
 * tick from Swap logs, feed answers from AnswerUpdated logs (where a feed emits them; proxies do
 * not, and the time cadence covers those), each starting from a read at a block (startup,
 * discovery, FeedSet, reorg). It never values anything: record contexts are read from the chain
 * at their block (BlockValuator).
 */
export class PriceWatch {
  private readonly tokens = new Map<Address, TokenState>();
  private readonly pools = new Map<Address, PoolState>();
  private readonly feedTokens = new Map<Address, Set<Address>>();
  applyReading(s: PriceReading): void {
    if (s.kind === 'pool') {
      const cur = this.pools.get(s.pool.address);
      if (!cur || cur.asOf <= s.block) this.pools.set(s.pool.address, { ctx: s.pool, asOf: s.block });
      return;
    }
    const token = s.info.address.toLowerCase() as Address;
    const cur = this.tokens.get(token);
    if (cur && cur.asOf > s.block) return;
    if (cur) this.feedTokens.get(cur.feed)?.delete(token);
    this.tokens.set(token, {
      info: s.info,
      feed: s.feed.feed,
      feedDecimals: s.feed.feedDecimals,
      answer: s.feed.answer,
      updatedAt: s.feed.updatedAt,
      asOf: s.block,
    });
    const set = this.feedTokens.get(s.feed.feed) ?? new Set<Address>();
    this.feedTokens.set(s.feed.feed, set);
    set.add(token);
  }

  /** A pool's Swap: returns true when the tracked state changed. */
  applySwap(pool: Address, block: number, sqrtPriceX96: string, tick: number): boolean {
    const p = this.pools.get(pool);
    if (!p || block <= p.asOf) return false;
    if (p.ctx.sqrtPriceX96 === sqrtPriceX96 && p.ctx.tick === tick) return false;
    p.ctx = { ...p.ctx, sqrtPriceX96, tick };
    return true;
  }

  /** A feed's AnswerUpdated: returns the tokens whose price changed. */
  applyAnswer(feed: Address, block: number, answer: bigint, updatedAt: number): Address[] {
    const tokens = this.feedTokens.get(feed);
    if (!tokens) return [];
    const changed: Address[] = [];
    for (const t of tokens) {
      const s = this.tokens.get(t)!;
      if (block <= s.asOf) continue;
      s.updatedAt = Math.max(s.updatedAt, updatedAt);
      if (s.answer === answer) continue;
      s.answer = answer;
      changed.push(t);
    }
    return changed;
  }

  /** Tracked tokens with a feed, and when that feed last updated (Unix seconds). */
  *feedAges(): Iterable<{ token: Address; feed: Address; updatedAt: number }> {
    for (const [token, s] of this.tokens)
      if (s.feed !== ZERO) yield { token, feed: s.feed, updatedAt: s.updatedAt };
  }

  hasToken(token: Address): boolean {
    return this.tokens.has(token);
  }

  hasPool(pool: Address): boolean {
    return this.pools.has(pool);
  }

  poolTick(pool: Address): number | undefined {
    return this.pools.get(pool)?.ctx.tick;
  }

  tokenAddresses(): Address[] {
    return [...this.tokens.keys()];
  }

  poolAddresses(): Address[] {
    return [...this.pools.keys()];
  }

  /** Every feed some tracked token prices from now. */
  feedAddresses(): Address[] {
    return [...this.feedTokens.entries()].filter(([f, s]) => s.size > 0 && f !== ZERO).map(([f]) => f);
  }

  /** The tracked answer of a token's feed (raw, feed decimals), or undefined when untracked. */
  answerOf(token: Address): bigint | undefined {
    return this.tokens.get(token)?.answer;
  }
}
