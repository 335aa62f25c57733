/**
 * Test-only record builders (not exported from the package): a WETH/USDC vault with an ARB reward
 * token, on one pool. Every record goes through the `vaultRecord` zod schema, so tests fold only
 * records the log would accept.
 */
import { getSqrtRatioAtTick } from '../math/tick-math.js';
import { type VaultRecord, type VaultRecordOf, vaultRecord } from '../records/envelope.js';
import type { Payload, RecordType } from '../records/payloads.js';
import { ZERO_HASH } from '../records/primitives.js';

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
}

export const market0: Market = { weth: '2000', usdc: '1', arb: '0.5', tick: TICK_2000 };

export function context(m: Market) {
  return {
    tokens: [
      { address: WETH, symbol: 'WETH', decimals: 18, priceUsd: m.weth },
      { address: USDC, symbol: 'USDC', decimals: 6, priceUsd: m.usdc },
      { address: ARB, symbol: 'ARB', decimals: 18, priceUsd: m.arb },
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
  };
}

const hex = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

/** Builds consecutive records: one block (12 s) per record unless told otherwise. */
export class History {
  block = 100;
  ts = 1_700_000_000;
  market: Market = market0;

  record<T extends RecordType>(type: T, payload: Payload<T>, m: Partial<Market> = {}): VaultRecordOf<T> {
    this.market = { ...this.market, ...m };
    this.block += 1;
    this.ts += 12;
    return vaultRecord.parse({
      schemaVersion: 1,
      chainId: 31337,
      blockNumber: this.block,
      blockHash: hex(this.block),
      blockTimestamp: this.ts,
      txHash: type === 'mark' ? ZERO_HASH : hex(this.block * 7),
      txIndex: type === 'mark' ? -1 : 0,
      logIndex: type === 'mark' ? -1 : 0,
      vault: VAULT,
      context: context(this.market),
      type,
      payload,
    }) as VaultRecordOf<T>;
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
