/**
 * The equity-point rule, pure: one point per block end that moved value, flows or the holding
 * value (fold version 5) at the JSON edge's precision (6 dp) or the strategy, plus the vault's
 * first; decided against the previous
 * block end, so the series is the same however batches cut the log (a state reloaded from its
 * snapshot finds that block end with `equityBasis`).
 */

import { eth, History, oneBlock, USDC, usdc, WETH } from '@vault-yield/test-kit/domain';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createVaultState, evolve, foldRecord } from '../fold/evolve.js';
import { deserializeState, serializeState } from '../fold/serialize.js';
import { copyState, type VaultState } from '../fold/state.js';
import { holdValueUsd } from '../mapping/lp.js';
import { formatFixed, toMicros } from '../math/fixed.js';
import type { VaultRecord } from '../records/envelope.js';
import { type EquityPoint, equityBasis, equityPoint, formatMicros, type Micros, microsOf } from './index.js';

/** A state as the projector loads it from its snapshot row. */
const reloaded = (s: VaultState): VaultState =>
  deserializeState(JSON.parse(JSON.stringify(serializeState(s))));

/**
 * The series the projector writes for `records` (its fold loop, foldInto): a point may come at
 * each block end, compared with the last block end's micros carried from record to record —
 * except where `reload(i)` says a batch starts at record i: the state is then reloaded from its
 * snapshot and the micros are what `equityBasis` finds in it.
 */
function seriesOf(
  records: readonly VaultRecord[],
  reload: (i: number) => boolean = () => false,
): EquityPoint[] {
  const out: EquityPoint[] = [];
  let state: VaultState | undefined;
  let micros: Micros | null = null;
  records.forEach((r, i) => {
    if (state && reload(i)) {
      state = reloaded(state);
      micros = equityBasis(state);
    }
    const after = foldRecord(state, r);
    if (r.lastInBlock) {
      const point = equityPoint(state ? micros : null, after);
      if (point.row) out.push(point.row);
      micros = point.micros;
    }
    state = after;
  });
  return out;
}

/** The rule written out independently: the figures as text, compared block end to block end. */
function expectedSeries(records: readonly VaultRecord[]): EquityPoint[] {
  const out: EquityPoint[] = [];
  let state: VaultState | undefined;
  let last: string | null = null;
  for (const r of records) {
    state = foldRecord(state, r);
    if (!r.lastInBlock) continue;
    const s = state;
    const figures = [
      formatFixed(s.valueUsd, 6),
      formatFixed(s.capitalInUsd, 6),
      formatFixed(s.capitalOutUsd, 6),
    ];
    const hold = s.lp ? formatFixed(holdValueUsd(s), 6) : null;
    const key = JSON.stringify([...figures, hold, s.strategy]);
    if (key === last) continue;
    last = key;
    out.push({
      chainId: s.chainId,
      vault: s.vault,
      ts: s.updatedAt,
      blockNumber: s.blockNumber,
      seq: s.records,
      valueUsd: figures[0]!,
      capitalInUsd: figures[1]!,
      capitalOutUsd: figures[2]!,
      strategy: s.strategy,
      returnIndex: formatFixed(s.returnIndex, 18),
      holdValueUsd: hold,
    });
  }
  return out;
}

const figuresOf = (m: Micros | null) =>
  m && {
    value: m.value,
    capitalIn: m.capitalIn,
    capitalOut: m.capitalOut,
    strategy: m.strategy,
    hold: m.hold,
  };

/** What a vault does between blocks: flows (some below 6 dp), price moves (often none), a strategy switch. */
const Op = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ k: fc.constant('deposit' as const), units: fc.integer({ min: 1, max: 5000 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant('eth' as const), milli: fc.integer({ min: 1, max: 3000 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('withdraw' as const),
      permille: fc.integer({ min: 1, max: 1000 }),
    }),
  },
  // A few wei of WETH: 10^-15 USD, below the JSON edge's precision.
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant('dust' as const), wei: fc.integer({ min: 1, max: 999 }) }),
  },
  {
    weight: 4,
    arbitrary: fc.record({ k: fc.constant('mark' as const), weth: fc.constantFrom(0, 0, 0, -40, 1, 75) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant('strategy' as const),
      name: fc.constantFrom('wide-eth', 'tight-eth'),
    }),
  },
);
type Op = typeof Op extends fc.Arbitrary<infer T> ? T : never;

/** A vault's records, cut into blocks of 1–4 records (only each block's last `lastInBlock`). */
function buildLog(ops: readonly Op[], sizes: readonly number[]): VaultRecord[] {
  const h = new History();
  let idle = 0n;
  let weth = 2000;
  const flat: VaultRecord[] = [h.created()];
  for (const op of ops) {
    switch (op.k) {
      case 'deposit':
        idle += usdc(op.units);
        flat.push(h.deposit(USDC, usdc(op.units)));
        break;
      case 'eth':
        flat.push(h.deposit(WETH, eth(op.milli / 1000)));
        break;
      case 'withdraw': {
        const amount = (idle * BigInt(op.permille)) / 1000n;
        idle -= amount;
        flat.push(h.withdrawal(USDC, amount));
        break;
      }
      case 'dust':
        flat.push(h.deposit(WETH, BigInt(op.wei)));
        break;
      case 'mark':
        weth += op.weth;
        flat.push(h.mark({ weth: String(weth) }));
        break;
      case 'strategy':
        flat.push(h.record('strategy.selected', { strategy: op.name }));
        break;
    }
  }
  const out: VaultRecord[] = [];
  for (let at = 0, k = 0; at < flat.length; k++) {
    const n = sizes[k % sizes.length]!;
    out.push(...oneBlock(flat.slice(at, at + n)));
    at += n;
  }
  return out;
}

const logArb = fc
  .record({
    ops: fc.array(Op, { minLength: 1, maxLength: 50 }),
    sizes: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 20 }),
  })
  .map(({ ops, sizes }) => buildLog(ops, sizes));
const runs = { numRuns: 150 };

describe('equity points (the rule)', () => {
  it('a new vault makes a point at its first block end, whatever its figures', () => {
    const h = new History();
    const created = createVaultState(h.created());
    const { row, micros } = equityPoint(null, created);
    expect(row).toEqual({
      chainId: created.chainId,
      vault: created.vault,
      ts: created.updatedAt,
      blockNumber: created.blockNumber,
      seq: 1,
      valueUsd: '0',
      capitalInUsd: '0',
      capitalOutUsd: '0',
      strategy: 'wide-eth',
      returnIndex: '1',
      holdValueUsd: '0',
    });
    expect(figuresOf(micros)).toEqual({
      value: 0n,
      capitalIn: 0n,
      capitalOut: 0n,
      strategy: 'wide-eth',
      hold: 0n,
    });
  });

  it('a block end that moved nothing at 6 dp makes none; a price move, a flow or a strategy switch makes one', () => {
    const h = new History();
    const created = createVaultState(h.created());
    let m = equityPoint(null, created).micros;
    const step = (s: VaultState, r: VaultRecord) => {
      const after = evolve(s, r);
      const point = equityPoint(m, after);
      m = point.micros;
      return { after, row: point.row };
    };
    const funded = step(created, h.deposit(WETH, eth(1)));
    expect(funded.row).toMatchObject({ valueUsd: '2000', capitalInUsd: '2000', seq: 2 });
    const quiet = step(funded.after, h.mark());
    expect(quiet.row).toBeNull();
    // 999 wei at 2,000 USD: 2·10^-12 USD more in and in value, nothing at 6 dp.
    const dust = step(quiet.after, h.deposit(WETH, 999n));
    expect(dust.after.capitalInUsd).toBeGreaterThan(funded.after.capitalInUsd);
    expect(dust.row).toBeNull();
    const moved = step(dust.after, h.mark({ weth: '2100' }));
    expect(moved.row).toMatchObject({ valueUsd: '2100', capitalInUsd: '2000', returnIndex: '1.04' }); // net of the 20 accrued on the gain
    const switched = step(moved.after, h.record('strategy.selected', { strategy: 'tight-eth' }));
    expect(switched.row).toMatchObject({ valueUsd: '2100', strategy: 'tight-eth', seq: 6 });
    const out = step(switched.after, h.withdrawal(WETH, eth(0.5)));
    expect(out.row).toMatchObject({ valueUsd: '1050', capitalOutUsd: '1050' });
  });

  it('the holding value: carried by each point, a move of it alone makes one; null for a state folded before fold version 5', () => {
    const h = new History();
    let s = createVaultState(h.created());
    s = evolve(s, h.deposit(WETH, eth(1)));
    const funded = equityPoint(null, s);
    expect(funded.row).toMatchObject({ valueUsd: '2000', holdValueUsd: '2000' });
    // The same value, flows and strategy against another basket (a swap inside a position moves
    // the vault's tokens, not the basket's): the holding line moved, so the chart gets a point.
    const other = { ...copyState(s), benchmark: { [USDC]: usdc(1500) * 10n ** 18n } };
    expect(holdValueUsd(other)).toBe(1500n * 10n ** 18n);
    expect(equityPoint(funded.micros, other).row).toMatchObject({ valueUsd: '2000', holdValueUsd: '1500' });
    expect(equityPoint(funded.micros, s).row).toBeNull();
    // A state folded before fold version 5 has no LP figures: its points carry null (and a null
    // hold against a null hold moves nothing).
    const old = { ...copyState(s), lp: null };
    const before = equityPoint(null, old);
    expect(before.row?.holdValueUsd).toBeNull();
    expect(before.micros.hold).toBeNull();
    expect(equityPoint(before.micros, old).row).toBeNull();
    expect(reloaded(old).lp).toBeNull();
  });

  it('a flow whose block leaves the value where it was still makes a point (in, then out)', () => {
    const h = new History();
    let s = createVaultState(h.created());
    s = evolve(s, h.deposit(WETH, eth(1)));
    s = evolve(s, h.deposit(USDC, usdc(1000))); // 3,000 USD: 1 WETH at 2,000 and 1,000 USDC
    let m = equityPoint(null, s).micros;
    const block = (rs: VaultRecord[]) => {
      s = rs.reduce((st, r) => evolve(st, r), s);
      const point = equityPoint(m, s);
      m = point.micros;
      return point.row;
    };
    // 100 USDC in while WETH falls by 100: the value stays 3,000.
    const paidIn = block(oneBlock([h.deposit(USDC, usdc(100)), h.mark({ weth: '1900' })]));
    expect(paidIn).toMatchObject({ valueUsd: '3000', capitalInUsd: '3100', capitalOutUsd: '0' });
    // 100 USDC out while WETH rises by 100: the value stays 3,000.
    const paidOut = block(oneBlock([h.withdrawal(USDC, usdc(100)), h.mark({ weth: '2000' })]));
    expect(paidOut).toMatchObject({ valueUsd: '3000', capitalInUsd: '3100', capitalOutUsd: '100' });
  });

  it('equityBasis: the state itself at a block end, the previous block end inside a block, none inside the first', () => {
    const h = new History();
    const [created, deposit] = oneBlock([h.created(), h.deposit(USDC, usdc(1000))]);
    const open = createVaultState(created!);
    expect(open.blockStart).toBeDefined();
    expect(equityBasis(open)).toBeNull();
    const ended = evolve(open, deposit!);
    expect(equityBasis(ended)).toEqual(microsOf(ended));
    const [more] = oneBlock([h.deposit(USDC, usdc(500)), h.mark()]);
    const inside = evolve(ended, more!);
    expect(inside.capitalInUsd).not.toBe(ended.capitalInUsd);
    expect(figuresOf(equityBasis(reloaded(inside)))).toEqual(figuresOf(microsOf(ended)));
  });
});

describe('equity points (properties over random logs of blocks of several records)', () => {
  it('the series is the rule written out: a point per block end whose 6 dp figures (value, flows, holding value) or strategy moved, and the first', () => {
    fc.assert(
      fc.property(logArb, (records) => {
        expect(seriesOf(records)).toEqual(expectedSeries(records));
      }),
      runs,
    );
  });

  it('the same series however batches cut the log (states reloaded from their snapshots, mid-block too)', () => {
    fc.assert(
      fc.property(
        logArb.chain((records) =>
          fc.tuple(
            fc.constant(records),
            fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, records.length - 1) }), { maxLength: 12 }),
          ),
        ),
        ([records, cuts]) => {
          const whole = seriesOf(records);
          const at = new Set(cuts);
          expect(seriesOf(records, (i) => at.has(i))).toEqual(whole);
          expect(seriesOf(records, () => true)).toEqual(whole);
        },
      ),
      runs,
    );
  });

  it('equityBasis of any state is the micros of its last block end (null before the first)', () => {
    fc.assert(
      fc.property(logArb, (records) => {
        let state: VaultState | undefined;
        let lastEnd: VaultState | null = null;
        for (const r of records) {
          state = foldRecord(state, r);
          if (r.lastInBlock) lastEnd = state;
          expect(figuresOf(equityBasis(reloaded(state)))).toEqual(figuresOf(lastEnd && microsOf(lastEnd)));
        }
      }),
      runs,
    );
  });

  it('micros carried from the previous state are the micros of the state itself', () => {
    fc.assert(
      fc.property(logArb, (records) => {
        let state: VaultState | undefined;
        let carried: Micros | null = null;
        for (const r of records) {
          state = foldRecord(state, r);
          carried = microsOf(state, carried);
          expect(carried).toEqual(microsOf(state));
        }
      }),
      runs,
    );
  });
});

describe('equity text', () => {
  it('formatMicros(toMicros(x)) is formatFixed(x, 6)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }), (x) => {
        expect(formatMicros(toMicros(x))).toBe(formatFixed(x, 6));
      }),
      { numRuns: 5000 },
    );
    // Figures under 2^53 micro-USD take a path of their own (numbers, not bigints).
    const safe = BigInt(Number.MAX_SAFE_INTEGER) * 10n ** 12n;
    fc.assert(
      fc.property(fc.bigInt({ min: -safe - 10n ** 13n, max: safe + 10n ** 13n }), (x) => {
        expect(formatMicros(toMicros(x))).toBe(formatFixed(x, 6));
      }),
      { numRuns: 5000 },
    );
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }),
        fc.integer({ min: -3, max: 3 }),
        (m, k) => {
          const x = m * 10n ** 12n + BigInt(k) * 5n * 10n ** 11n;
          expect(formatMicros(toMicros(x))).toBe(formatFixed(x, 6));
        },
      ),
      { numRuns: 5000 },
    );
    for (const x of [
      0n,
      1n,
      -1n,
      499_999_999_999n,
      500_000_000_000n,
      -500_000_000_000n,
      10n ** 18n,
      BigInt(Number.MAX_SAFE_INTEGER) * 10n ** 12n,
      -(BigInt(Number.MAX_SAFE_INTEGER) * 10n ** 12n),
      (BigInt(Number.MAX_SAFE_INTEGER) + 1n) * 10n ** 12n,
      10_000_000n * 10n ** 12n,
      -10_000n * 10n ** 12n,
    ])
      expect(formatMicros(toMicros(x))).toBe(formatFixed(x, 6));
  });
});
