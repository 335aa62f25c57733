import { formatScaled, type TokenFeedState, type TokenInfo } from '@vault-yield/chain';
import type { PoolContext, TokenContext, ValuationContext } from '@vault-yield/domain';
import { ContextError } from './errors.js';

type Address = `0x${string}`;

interface TokenState {
  info: TokenInfo;
  feed: Address;
  feedDecimals: number;
  answer: bigint;
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
export type MarketSnapshot =
  | { kind: 'token'; block: number; info: TokenInfo; feed: TokenFeedState }
  | { kind: 'pool'; block: number; pool: PoolContext };

const ZERO = '0x0000000000000000000000000000000000000000';

/**
 * Valuation state moved forward by events: token prices from feed AnswerUpdated logs, pool price
 * and tick from Swap logs, each starting from a read at a block (startup, discovery, FeedSet,
 * reorg). Chainlink answers and v3 Swap(sqrtPriceX96, tick) carry the exact new state, so the
 * context of a block equals what `eth_call` at that block returns, at no per-block cost.
 */
export class MarketTracker {
  private readonly tokens = new Map<Address, TokenState>();
  private readonly pools = new Map<Address, PoolState>();
  private readonly feedTokens = new Map<Address, Set<Address>>();
  private readonly contextCache = new Map<string, ValuationContext>();
  /** Bumped whenever a price or pool state changes (contexts computed before are stale). */
  private version = 0;
  /** Per valued-set object: the last context handed out and the version it is valid for. */
  private readonly lastContext = new WeakMap<
    ValuedSet,
    { version: number; key: ValuedSet; ctx: ValuationContext }
  >();

  private invalidate(): void {
    this.contextCache.clear();
    this.version++;
  }

  applySnapshot(s: MarketSnapshot): void {
    this.invalidate();
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
    this.invalidate();
    return true;
  }

  /** A feed's AnswerUpdated: returns the tokens whose price changed. */
  applyAnswer(feed: Address, block: number, answer: bigint): Address[] {
    const tokens = this.feedTokens.get(feed);
    if (!tokens) return [];
    const changed: Address[] = [];
    for (const t of tokens) {
      const s = this.tokens.get(t)!;
      if (block <= s.asOf || s.answer === answer) continue;
      s.answer = answer;
      changed.push(t);
    }
    if (changed.length > 0) this.invalidate();
    return changed;
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

  private tokenContext(token: Address): TokenContext {
    const s = this.tokens.get(token);
    if (!s) throw new ContextError(`token ${token} is not tracked`);
    if (s.feed === ZERO)
      throw new ContextError(`no USD feed registered for token ${token} (as of block ${s.asOf})`);
    if (s.answer < 0n) throw new ContextError(`feed ${s.feed} answered ${s.answer} (< 0) for token ${token}`);
    return {
      address: s.info.address.toLowerCase() as Address,
      symbol: s.info.symbol,
      decimals: s.info.decimals,
      priceUsd: formatScaled(s.answer, s.feedDecimals),
    };
  }

  /**
   * The context of a vault now (after the events applied so far): tokens [token0, token1,
   * rewardToken if distinct] and pools [its pool] — the shape ValuationReader.read returns.
   */
  context(v: ValuedSet): ValuationContext {
    // Hot path (one call per record): the same vault object asks again until something changes.
    const last = this.lastContext.get(v);
    if (
      last &&
      last.version === this.version &&
      last.key.token0 === v.token0 &&
      last.key.token1 === v.token1 &&
      last.key.rewardToken === v.rewardToken &&
      last.key.pool === v.pool
    )
      return last.ctx;
    const ctx = this.contextOf(v);
    this.lastContext.set(v, {
      version: this.version,
      key: { token0: v.token0, token1: v.token1, rewardToken: v.rewardToken, pool: v.pool },
      ctx,
    });
    return ctx;
  }

  private contextOf(v: ValuedSet): ValuationContext {
    const key = `${v.token0}|${v.token1}|${v.rewardToken}|${v.pool}`;
    const hit = this.contextCache.get(key);
    if (hit) return hit;
    const tokens = [v.token0, v.token1];
    if (!tokens.includes(v.rewardToken)) tokens.push(v.rewardToken);
    const pool = this.pools.get(v.pool);
    if (!pool) throw new ContextError(`pool ${v.pool} is not tracked`);
    const ctx: ValuationContext = { tokens: tokens.map((t) => this.tokenContext(t)), pools: [pool.ctx] };
    this.contextCache.set(key, ctx);
    return ctx;
  }
}
