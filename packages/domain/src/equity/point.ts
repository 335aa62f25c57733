import type { VaultState } from '../fold/state.js';
import { holdValueUsd } from '../mapping/lp.js';
import { formatFixed, formatScaled, toMicros } from '../math/fixed.js';

/**
 * The equity-point rule: which states of a vault make a point of its equity series, and the
 * point's figures. It changes with the fold (what a block end is, what a state holds), so it lives
 * beside it; the projector writes the points, the returns (../returns) read them back.
 */

/** A point of a vault's equity series as written (decimal text at the JSON edge's precision). */
export interface EquityPoint {
  /** The vault's chain: a vault is (chainId, vault). */
  chainId: number;
  vault: string;
  /** Block time, Unix ms. */
  ts: number;
  blockNumber: number;
  /** Records folded into the vault at this point: a total order per vault. */
  seq: number;
  valueUsd: string;
  capitalInUsd: string;
  capitalOutUsd: string;
  /** The strategy in force after this point's record. */
  strategy: string;
  /** The fold's exact return index (decimal, 18 dp). */
  returnIndex: string;
  /**
   * The benchmark basket at the point's prices (mapping/lp.ts `holdValueUsd`): the vs-holding
   * line; null for a state folded before fold version 5 (VaultState.lp null).
   */
  holdValueUsd: string | null;
}

/** A point of a vault's equity series as read back for realised returns (../returns). */
export interface EquitySample {
  /** Unix ms. */
  ts: number;
  valueUsd: number;
  capitalInUsd: number;
  capitalOutUsd: number;
  /** The strategy in force after this point's record. */
  strategy: string;
  /** The fold's exact return index at this point (1 at creation). */
  returnIndex: number;
}

/** A state's value and flows rounded to the JSON edge's precision (6 dp), in micro-USD. */
export interface Micros {
  value: bigint;
  capitalIn: bigint;
  capitalOut: bigint;
  /** The strategy in force (a switch always makes a point: returns count for the strategy then). */
  strategy: string;
  /** The benchmark basket's value (null: the state has no LP figures, fold version < 5). */
  hold: bigint | null;
  /** The exact flows these round: the next state's are rounded again only when they moved. */
  exact: { capitalIn: bigint; capitalOut: bigint };
}

/** `s`'s micros; the flows' are taken from `prev` when its exact flows are `s`'s (most records move none). */
export function microsOf(s: VaultState, prev: Micros | null = null): Micros {
  const sameIn = prev !== null && prev.exact.capitalIn === s.capitalInUsd;
  const sameOut = prev !== null && prev.exact.capitalOut === s.capitalOutUsd;
  return {
    value: toMicros(s.valueUsd),
    capitalIn: sameIn ? prev.capitalIn : toMicros(s.capitalInUsd),
    capitalOut: sameOut ? prev.capitalOut : toMicros(s.capitalOutUsd),
    strategy: s.strategy,
    hold: s.lp ? toMicros(holdValueUsd(s)) : null,
    exact: sameIn && sameOut ? prev.exact : { capitalIn: s.capitalInUsd, capitalOut: s.capitalOutUsd },
  };
}

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** Leading zeros of a fraction, by how many. */
const ZEROS = ['', '0', '00', '000', '0000', '00000'];
/** `formatFixed(x, 6)` given `toMicros(x)`: the same text without rounding twice. */
export function formatMicros(m: bigint): string {
  // A figure under 2^53 micro-USD (≈ 9 billion USD) is a double exactly: its text from numbers,
  // without the bigint divisions and the regex (a point writes three of these).
  if (m < SAFE && m > -SAFE) {
    const n = Number(m);
    const abs = n < 0 ? -n : n;
    const int = Math.floor(abs / 1e6);
    let frac = abs - int * 1e6;
    const sign = n < 0 ? '-' : '';
    if (frac === 0) return `${sign}${int}`;
    let places = 6;
    while (frac % 10 === 0) {
      frac /= 10;
      places--;
    }
    const digits = `${frac}`;
    return `${sign}${int}.${ZEROS[places - digits.length]}${digits}`;
  }
  return formatScaled(m, 6);
}

/**
 * Equity points: one per block end (a vault's `lastInBlock` record) that changed value, flows or
 * the holding value at the JSON edge's precision (6 dp) or the strategy, plus the vault's first. Records before the
 * last of their block make none: they are valued at the block's end with only part of its flows,
 * so they are no instant a chart may show (net of flows would swing inside one block). Each point
 * carries the strategy then in force and the fold's exact return index (realised returns never
 * use the rounded figures). Decided by comparing with the previous block end (`before`: its
 * micros, `equityBasis`; null for a new vault), so the series is the same whatever the batch
 * boundaries (and after a re-fold). Returns the point (or null) and `after`'s micros.
 */
export function equityPoint(
  before: Micros | null,
  after: VaultState,
): { row: EquityPoint | null; micros: Micros } {
  const micros = microsOf(after, before);
  if (
    before &&
    before.value === micros.value &&
    before.capitalIn === micros.capitalIn &&
    before.capitalOut === micros.capitalOut &&
    before.strategy === micros.strategy &&
    before.hold === micros.hold
  ) {
    return { row: null, micros };
  }
  return {
    row: {
      chainId: after.chainId,
      vault: after.vault,
      ts: after.updatedAt,
      blockNumber: after.blockNumber,
      seq: after.records,
      valueUsd: formatMicros(micros.value),
      capitalInUsd: formatMicros(micros.capitalIn),
      capitalOutUsd: formatMicros(micros.capitalOut),
      strategy: after.strategy,
      returnIndex: formatFixed(after.returnIndex, 18),
      holdValueUsd: micros.hold === null ? null : formatMicros(micros.hold),
    },
    micros,
  };
}

/**
 * What a vault's next equity point is compared with, from its state alone (a state loaded from
 * its snapshot): the micros of its last block end — the state itself at a block end, the
 * previous block end (`blockStart.end`) inside a block; null when the vault has had no block end yet.
 */
export function equityBasis(s: VaultState): Micros | null {
  const b = s.blockStart;
  if (!b) return microsOf(s);
  return b.end ? microsOf(b.end) : null;
}
