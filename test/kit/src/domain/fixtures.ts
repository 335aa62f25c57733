/**
 * Test-only record builders (not exported from the package): a WETH/USDC vault with an ARB reward
 * token, on one pool. Every record goes through the `vaultRecord` zod schema, so tests fold only
 * records the log would accept.
 */

import type { Payload, RecordType } from '@vault-yield/domain';
import {
  getSqrtRatioAtTick,
  SCHEMA_VERSION,
  type VaultRecord,
  type VaultRecordOf,
  vaultRecord,
  ZERO_HASH,
} from '@vault-yield/domain';

export const VAULT = `0x${'aa'.repeat(20)}` as const;
export const OWNER = `0x${'0b'.repeat(20)}` as const;
export const WETH = `0x${'e1'.repeat(20)}` as const;
export const USDC = `0x${'c1'.repeat(20)}` as const;
export const ARB = `0x${'a7'.repeat(20)}` as const;
export const POOL = `0x${'9a'.repeat(20)}` as const;
export const OTHER = `0x${'77'.repeat(20)}` as const;

/** Tick where 1 WETH ≈ 2000 USDC (1.0001^t · 10^12 = 2000). */
export const TICK_2000 = -200311;

export interface Market {
  weth: string;
  usdc: string;
  arb: string;
  tick: number;
  /** Unix seconds of the feeds' last update; undefined = updated at the record's block. */
  pricesAt?: number;
}

export const market0: Market = { weth: '2000', usdc: '1', arb: '0.5', tick: TICK_2000 };

export const FEED_WETH = `0x${'f1'.repeat(20)}` as const;
export const FEED_USDC = `0x${'f2'.repeat(20)}` as const;
export const FEED_ARB = `0x${'f3'.repeat(20)}` as const;
export const HEARTBEAT = 3600;

/** The chain as the unit tests see it: what the vault holds after each block. */
export interface ChainHoldings {
  balances: Record<string, bigint>;
  positions: Record<
    string,
    { tickLower: number; tickUpper: number; liquidity: bigint; owed0: bigint; owed1: bigint }
  >;
  pending: bigint;
}

export const emptyHoldings = (): ChainHoldings => ({ balances: {}, positions: {}, pending: 0n });

export function context(m: Market, held: ChainHoldings = emptyHoldings(), ts = 0) {
  const at = m.pricesAt ?? ts;
  const token = (
    address: `0x${string}`,
    symbol: string,
    decimals: number,
    priceUsd: string,
    feed: `0x${string}`,
  ) => ({
    address,
    symbol,
    decimals,
    priceUsd,
    feed,
    priceUpdatedAt: at,
    heartbeat: HEARTBEAT,
  });
  return {
    tokens: [
      token(WETH, 'WETH', 18, m.weth, FEED_WETH),
      token(USDC, 'USDC', 6, m.usdc, FEED_USDC),
      token(ARB, 'ARB', 18, m.arb, FEED_ARB),
    ],
    pools: [
      {
        address: POOL,
        venue: 'uniswap-v3',
        feeTier: 500,
        sqrtPriceX96: getSqrtRatioAtTick(m.tick).toString(),
        tick: m.tick,
        token0: WETH,
        token1: USDC,
      },
    ],
    holdings: {
      balances: Object.entries(held.balances)
        .filter(([, a]) => a !== 0n)
        .map(([token, amount]) => ({ token, amount: amount.toString() })),
      positions: Object.entries(held.positions).map(([id, p]) => ({
        id,
        pool: POOL,
        tickLower: p.tickLower,
        tickUpper: p.tickUpper,
        liquidity: p.liquidity.toString(),
        owed0: p.owed0.toString(),
        owed1: p.owed1.toString(),
      })),
      pendingRewards: held.pending > 0n ? [{ token: ARB, amount: held.pending.toString() }] : [],
    },
  };
}

const hex = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

const add = (m: Record<string, bigint>, token: string, delta: bigint) => {
  m[token] = (m[token] ?? 0n) + delta;
};

/**
 * Moves the test chain the way the reference Vault does for a record's payload: the context of
 * the record then holds the vault's state after it (one record per block).
 */
export function applyToChain(
  held: ChainHoldings,
  r: { type: RecordType; payload: Record<string, unknown> },
): void {
  const p = r.payload as Record<string, string>;
  const b = held.balances;
  switch (r.type) {
    case 'deposit':
      add(b, p.token!, BigInt(p.amount!));
      return;
    case 'withdrawal':
    case 'fee.charged':
      add(b, p.token!, -BigInt(p.amount!));
      return;
    case 'position.opened':
      add(b, WETH, -BigInt(p.amount0!));
      add(b, USDC, -BigInt(p.amount1!));
      held.positions[p.positionId!] = {
        tickLower: Number(p.tickLower),
        tickUpper: Number(p.tickUpper),
        liquidity: BigInt(p.liquidity!),
        owed0: 0n,
        owed1: 0n,
      };
      return;
    case 'position.resized': {
      add(b, WETH, -BigInt(p.amount0Delta!));
      add(b, USDC, -BigInt(p.amount1Delta!));
      const pos = held.positions[p.positionId!];
      if (pos) pos.liquidity = BigInt(p.liquidity!);
      return;
    }
    case 'position.rebalanced': {
      add(b, WETH, BigInt(p.amount0Out!) - BigInt(p.amount0In!));
      add(b, USDC, BigInt(p.amount1Out!) - BigInt(p.amount1In!));
      const pos = held.positions[p.positionId!];
      if (pos)
        Object.assign(pos, {
          tickLower: Number(p.tickLower),
          tickUpper: Number(p.tickUpper),
          liquidity: BigInt(p.liquidity!),
        });
      return;
    }
    case 'position.closed': {
      add(b, WETH, BigInt(p.amount0!));
      add(b, USDC, BigInt(p.amount1!));
      const pos = held.positions[p.positionId!];
      if (pos) pos.liquidity = 0n;
      if (pos && pos.owed0 === 0n && pos.owed1 === 0n) delete held.positions[p.positionId!];
      return;
    }
    case 'fees.collected': {
      add(b, WETH, BigInt(p.amount0!));
      add(b, USDC, BigInt(p.amount1!));
      const pos = held.positions[p.positionId!];
      if (pos) {
        pos.owed0 = pos.owed0 > BigInt(p.amount0!) ? pos.owed0 - BigInt(p.amount0!) : 0n;
        pos.owed1 = pos.owed1 > BigInt(p.amount1!) ? pos.owed1 - BigInt(p.amount1!) : 0n;
        if (pos.liquidity === 0n && pos.owed0 === 0n && pos.owed1 === 0n)
          delete held.positions[p.positionId!];
      }
      return;
    }
    case 'position.received': {
      // Minted for the vault by someone else (paid by them): a position under its pool key, which
      // the test chain names by its range; merged into an open one of the same range.
      const same = Object.entries(held.positions).find(
        ([, q]) => q.tickLower === Number(p.tickLower) && q.tickUpper === Number(p.tickUpper),
      );
      if (same) same[1].liquidity += BigInt(p.liquidity!);
      else
        held.positions[`${Number(p.tickLower) + 1_000_000}${Number(p.tickUpper) + 1_000_000}`] = {
          tickLower: Number(p.tickLower),
          tickUpper: Number(p.tickUpper),
          liquidity: BigInt(p.liquidity!),
          owed0: 0n,
          owed1: 0n,
        };
      return;
    }
    case 'rewards.accrued':
      held.pending += BigInt(p.amount!);
      return;
    case 'rewards.claimed':
      held.pending -= BigInt(p.amount!);
      add(b, ARB, BigInt(p.amount!));
      return;
    default:
      return;
  }
}

/** Builds consecutive records: one block (12 s) per record unless told otherwise. */
export class History {
  block = 100;
  /** The vault's last sequence number (the next record takes seq + 1). */
  seq = 0;
  ts = 1_700_000_000;
  market: Market = market0;
  /** The vault's holdings on the test chain; tests may move them directly (a plain transfer). */
  held: ChainHoldings = emptyHoldings();

  record<T extends RecordType>(type: T, payload: Payload<T>, m: Partial<Market> = {}): VaultRecordOf<T> {
    this.block += 1;
    this.ts += 12;
    const moved = (['weth', 'usdc', 'arb'] as const).some((k) => k in m && m[k] !== this.market[k]);
    // Feeds update when their price moves (or as told); their age grows otherwise.
    this.market = { ...this.market, ...(moved ? { pricesAt: this.ts } : {}), ...m };
    this.market.pricesAt ??= this.ts;
    applyToChain(this.held, { type, payload: payload as Record<string, unknown> });
    return vaultRecord.parse({
      schemaVersion: SCHEMA_VERSION,
      seq: ++this.seq,
      chainId: 31337,
      blockNumber: this.block,
      blockHash: hex(this.block),
      blockTimestamp: this.ts,
      txHash: type === 'mark' ? ZERO_HASH : hex(this.block * 7),
      txIndex: type === 'mark' ? -1 : 0,
      logIndex: type === 'mark' ? -1 : 0,
      vault: VAULT,
      lastInBlock: true,
      context: context(this.market, this.held, this.ts),
      type,
      payload,
    }) as VaultRecordOf<T>;
  }

  /** A plain ERC-20 transfer straight to the vault (no vault event). */
  transfer(token: string, amount: bigint): void {
    add(this.held.balances, token, amount);
  }

  /** Trading fees accruing to an open position (seen only through the holdings). */
  accrueFees(id: string, owed0: bigint, owed1: bigint): void {
    const pos = this.held.positions[id];
    if (!pos) throw new Error(`no position ${id}`);
    pos.owed0 += owed0;
    pos.owed1 += owed1;
  }

  created(): VaultRecordOf<'vault.created'> {
    return this.record('vault.created', {
      owner: OWNER,
      strategy: 'wide-eth',
      token0: WETH,
      token1: USDC,
      pool: POOL,
    });
  }

  deposit(token: string, amount: bigint, m: Partial<Market> = {}) {
    return this.record('deposit', { from: OWNER, token: token as typeof WETH, amount: amount.toString() }, m);
  }

  withdrawal(token: string, amount: bigint, m: Partial<Market> = {}) {
    return this.record(
      'withdrawal',
      { to: OWNER, token: token as typeof WETH, amount: amount.toString() },
      m,
    );
  }

  mark(m: Partial<Market> = {}) {
    return this.record('mark', {}, m);
  }
}

export const eth = (n: number) => BigInt(Math.round(n * 1e6)) * 10n ** 12n;
export const usdc = (n: number) => BigInt(Math.round(n * 1e6));

export type AnyRecord = VaultRecord;

/**
 * Records moved into one block as the indexer writes a busy vault's block: the
 * last one's block, time and context (holdings and prices are read at the block's end), log
 * indexes in order, only the last `lastInBlock`.
 */
export function oneBlock(rs: readonly VaultRecord[]): VaultRecord[] {
  const last = rs.at(-1)!;
  return rs.map(
    (r, i) =>
      ({
        ...r,
        blockNumber: last.blockNumber,
        blockHash: last.blockHash,
        blockTimestamp: last.blockTimestamp,
        context: last.context,
        logIndex: i,
        lastInBlock: i === rs.length - 1,
      }) as VaultRecord,
  );
}
