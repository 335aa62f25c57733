import { eth, History, OTHER, oneBlock, USDC, usdc, WETH } from '@vault-yield/test-kit/domain';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFixed } from '../math/fixed.js';
import type { VaultRecord } from '../records/envelope.js';
import { createVaultState, evolve, foldRecord } from './evolve.js';
import { PERFORMANCE_FEE_BPS, performanceFeeDueRaw, performanceFeeDueUsd, settleHighWater } from './fees.js';
import type { VaultState } from './state.js';

const usd = parseFixed;
const RATE = 2000; // 20 %

/** Charges exactly the fee due, in USDC. */
function charge(h: History, s: VaultState): VaultState {
  const raw = performanceFeeDueRaw(s, USDC, RATE);
  return evolve(s, h.record('fee.charged', { token: USDC, amount: raw.toString(), recipient: OTHER }));
}

describe('performance fee with a high-water mark', () => {
  it('is due only above the previous peak, and the peak resets to the post-fee value', () => {
    const h = new History();
    let s = createVaultState(h.created());
    s = evolve(s, h.deposit(WETH, eth(1))); // 2000
    s = evolve(s, h.deposit(USDC, usdc(2000))); // 4000, HW 4000
    expect(performanceFeeDueUsd(s, RATE)).toBe(0n);

    s = evolve(s, h.mark({ weth: '3000' })); // 5000
    expect(performanceFeeDueUsd(s, RATE)).toBe(usd('200'));
    s = charge(h, s); // pays 200 USDC → 4800
    expect(s.highWaterUsd).toBe(usd('4800'));
    expect(s.taxedUsd).toBe(usd('200'));
    expect(performanceFeeDueUsd(s, RATE)).toBe(0n);

    s = evolve(s, h.mark({ weth: '2500' })); // 4300: below the peak
    expect(performanceFeeDueUsd(s, RATE)).toBe(0n);
    s = evolve(s, h.mark({ weth: '3000' })); // back to 4800 = the peak: still nothing
    expect(performanceFeeDueUsd(s, RATE)).toBe(0n);
    s = evolve(s, h.mark({ weth: '3100' })); // 4900: only the 100 above the peak
    expect(performanceFeeDueUsd(s, RATE)).toBe(usd('20'));
  });

  it('the mark does not follow the value between charges', () => {
    const h = new History();
    let s = createVaultState(h.created());
    s = evolve(s, h.deposit(USDC, usdc(1000)));
    s = evolve(s, h.deposit(WETH, eth(1), { weth: '1000' })); // 2000
    s = evolve(s, h.mark({ weth: '1500' })); // 2500, no charge
    s = evolve(s, h.mark({ weth: '1200' })); // 2200
    expect(s.highWaterUsd).toBe(usd('2000'));
    expect(performanceFeeDueUsd(s, RATE)).toBe(usd('40'));
  });

  it('deposits raise and withdrawals scale the mark, so flows never create a fee', () => {
    const h = new History();
    let s = createVaultState(h.created());
    s = evolve(s, h.deposit(USDC, usdc(1000)));
    s = evolve(s, h.deposit(WETH, eth(1))); // 3000
    s = evolve(s, h.mark({ weth: '3000' })); // 4000, gain 1000
    expect(performanceFeeDueUsd(s, RATE)).toBe(usd('200'));
    s = evolve(s, h.withdrawal(USDC, usdc(1000))); // value 3000, HW 3000·(1 − 1000/4000) = 2250
    expect(s.highWaterUsd).toBe(usd('2250'));
    expect(performanceFeeDueUsd(s, RATE)).toBe(usd('150')); // the gain scaled pro rata
    s = evolve(s, h.deposit(USDC, usdc(500)));
    expect(performanceFeeDueUsd(s, RATE)).toBe(usd('150'));
  });

  it('a partial charge raises the mark only by the gain it settled, net of the charge', () => {
    const h = new History();
    let s = createVaultState(h.created());
    s = evolve(s, h.deposit(WETH, eth(1))); // 2000
    s = evolve(s, h.deposit(USDC, usdc(2000))); // 4000, HW 4000
    s = evolve(s, h.mark({ weth: '3000' })); // 5000: gain 1000, due 200 at 20 %
    expect(performanceFeeDueUsd(s, PERFORMANCE_FEE_BPS)).toBe(usd('200'));
    s = evolve(s, h.record('fee.charged', { token: USDC, amount: usdc(50).toString(), recipient: OTHER }));
    // 50 settles a gain of 250 (50 / 20 %): the mark rises by 250 − 50 = 200, not to 4950
    expect(s.highWaterUsd).toBe(usd('4200'));
    expect(performanceFeeDueUsd(s, PERFORMANCE_FEE_BPS)).toBe(usd('150'));
    s = evolve(s, h.record('fee.charged', { token: USDC, amount: usdc(150).toString(), recipient: OTHER }));
    expect(s.highWaterUsd).toBe(usd('4800')); // the whole gain settled: the post-fee value
    expect(s.valueUsd).toBe(usd('4800'));
    expect(s.taxedUsd).toBe(usd('200'));
    expect(performanceFeeDueUsd(s, PERFORMANCE_FEE_BPS)).toBe(0n);
  });

  it('settleHighWater: rate 0 settles the whole gain; a charge with no gain keeps the mark', () => {
    expect(settleHighWater(usd('100'), usd('150'), usd('10'), 0)).toBe(usd('140'));
    expect(settleHighWater(usd('100'), usd('90'), usd('10'))).toBe(usd('100'));
    expect(settleHighWater(usd('100'), usd('150'), usd('30'))).toBe(usd('120')); // over-charge: G − C
  });

  it('an over-charge never lowers the mark', () => {
    const h = new History();
    let s = createVaultState(h.created());
    s = evolve(s, h.deposit(USDC, usdc(1000)));
    s = evolve(s, h.record('fee.charged', { token: USDC, amount: usdc(100).toString(), recipient: OTHER }));
    expect(s.highWaterUsd).toBe(usd('1000'));
    expect(performanceFeeDueUsd(s, RATE)).toBe(0n);
  });

  it('validates the rate', () => {
    const s = { valueUsd: 1n, highWaterUsd: 0n };
    expect(() => performanceFeeDueUsd(s, -1)).toThrow(RangeError);
    expect(() => performanceFeeDueUsd(s, 10_001)).toThrow(RangeError);
    expect(() => performanceFeeDueUsd(s, 1.5)).toThrow(RangeError);
    expect(performanceFeeDueUsd({ valueUsd: usd('10'), highWaterUsd: 0n }, 10_000)).toBe(usd('10'));
  });
});

/**
 * Several capital flows of a vault in one block: its holdings are read at the block's end, so the
 * value just before each flow is known only there. The oracle: the same flows, at the same
 * prices, each in a block of its own, where every value before a flow was read.
 */
describe('flows sharing a block settle the index, the mark and the basket as flows in blocks of their own', () => {
  type Flow = { kind: 'deposit' | 'withdrawal' | 'fee'; weth: boolean; milli: number };
  const flow = fc.record({
    kind: fc.constantFrom<Flow['kind']>('deposit', 'withdrawal', 'fee'),
    weth: fc.boolean(),
    milli: fc.integer({ min: 1, max: 900 }),
  });
  const close = (a: bigint, b: bigint, label: string) =>
    expect(a - b <= 10n ** 9n && b - a <= 10n ** 9n, `${label}: ${a} vs ${b}`).toBe(true); // 10^-9 USD

  /**
   * A funded vault's records (created, two deposits, a price gain), then one per flow, each in a
   * block of its own at unchanged prices (amounts a share of what the vault then holds).
   */
  function records(flows: readonly Flow[], h: History): VaultRecord[] {
    const held = { weth: eth(2), usdc: usdc(4000) };
    const out: VaultRecord[] = [h.created(), h.deposit(WETH, held.weth), h.deposit(USDC, held.usdc)];
    out.push(h.mark({ weth: '2500' })); // a gain: the mark sits below the value, fees are due
    for (const f of flows) {
      const token = f.weth ? WETH : USDC;
      const have = f.weth ? held.weth : held.usdc;
      const amount = (have * BigInt(f.milli)) / 3000n + 1n; // < a third of the holding
      const sign = f.kind === 'deposit' ? 1n : -1n;
      if (f.weth) held.weth += sign * amount;
      else held.usdc += sign * amount;
      out.push(
        f.kind === 'deposit'
          ? h.deposit(token, amount)
          : f.kind === 'withdrawal'
            ? h.withdrawal(token, amount)
            : h.record('fee.charged', { token, amount: amount.toString(), recipient: OTHER }),
      );
    }
    return out;
  }

  it('property: any grouping of the flows (fees included) into blocks gives the same figures', () => {
    fc.assert(
      fc.property(
        fc.array(flow, { minLength: 2, maxLength: 8 }),
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 8 }),
        (flows, sizes) => {
          const own = records(flows, new History());
          const alone = own.reduce<VaultState | undefined>((s, r) => foldRecord(s, r), undefined)!;
          // The same records, the flows grouped into blocks of `sizes` (cycled).
          const grouped: VaultRecord[] = own.slice(0, 4);
          for (let i = 4, k = 0; i < own.length; k++) {
            const n = sizes[k % sizes.length]!;
            grouped.push(...oneBlock(own.slice(i, i + n)));
            i += n;
          }
          const shared = grouped.reduce<VaultState | undefined>((s, r) => foldRecord(s, r), undefined)!;
          expect(shared.valueUsd).toBe(alone.valueUsd);
          expect(shared.capitalInUsd).toBe(alone.capitalInUsd);
          expect(shared.capitalOutUsd).toBe(alone.capitalOutUsd);
          expect(shared.taxedUsd).toBe(alone.taxedUsd);
          close(shared.highWaterUsd, alone.highWaterUsd, 'high-water mark');
          // Fees included: each settles over the value just before it, wherever its block cut.
          close(shared.returnIndex, alone.returnIndex, 'return index');
          close(
            performanceFeeDueUsd(shared, PERFORMANCE_FEE_BPS),
            performanceFeeDueUsd(alone, PERFORMANCE_FEE_BPS),
            'fee due',
          );
          for (const t of new Set([...Object.keys(alone.benchmark), ...Object.keys(shared.benchmark)]))
            close(
              shared.benchmark[t as typeof WETH] ?? 0n,
              alone.benchmark[t as typeof WETH] ?? 0n,
              `basket ${t}`,
            );
          expect(shared.blockStart).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a withdrawal then a deposit in one block: the mark scales by the value before the withdrawal', () => {
    const h = new History();
    let s = createVaultState(h.created());
    s = evolve(s, h.deposit(USDC, usdc(100))); // 100, HW 100
    const [out, into] = oneBlock([h.withdrawal(USDC, usdc(50)), h.deposit(USDC, usdc(1000))]);
    const mid = evolve(s, out!);
    s = evolve(mid, into!);
    // Half of the value left, so half of the mark: 50, then + 1000. Valued against the block's
    // end (1,050 + 50) the withdrawal took 4.5 % of the mark, not 50 %.
    expect(s.highWaterUsd).toBe(usd('1050'));
    expect(s.benchmark[USDC]).toBe(usdc(1050) * 10n ** 18n);
  });
});

describe("the vault's own fee rate (chain truth, not the service's schedule)", () => {
  /** A vault created at `bps` (absent: a record of a factory that carried no rate), funded with 4,000, gaining 1,000. */
  function gained(bps?: number): { h: History; s: VaultState } {
    const h = new History();
    const created = h.created();
    const record =
      bps === undefined ? created : { ...created, payload: { ...created.payload, performanceFeeBps: bps } };
    let s = createVaultState(record);
    s = evolve(s, h.deposit(WETH, eth(1)));
    s = evolve(s, h.deposit(USDC, usdc(2000))); // 4000, HW 4000
    s = evolve(s, h.mark({ weth: '3000' })); // 5000: a gain of 1,000
    return { h, s };
  }
  const fee = (h: History, s: VaultState, amount: bigint) =>
    evolve(s, h.record('fee.charged', { token: USDC, amount: amount.toString(), recipient: OTHER }));

  it('a 10 % vault charged its whole fee (100) has its mark at the post-fee value, nothing left due', () => {
    const { h, s } = gained(1000);
    expect(s.performanceFeeBps).toBe(1000);
    expect(performanceFeeDueUsd(s, s.performanceFeeBps)).toBe(usd('100'));
    const t = fee(h, s, usdc(100)); // 4900
    expect(t.highWaterUsd).toBe(usd('4900'));
    expect(performanceFeeDueUsd(t, t.performanceFeeBps)).toBe(0n);
    // Settled at the service's 20 %, the charge of 100 would settle a gain of 500 only: mark 4,400,
    // and 100 more "still due" on a gain the owner already paid for.
    expect(settleHighWater(usd('4000'), usd('5000'), usd('100'), 2000)).toBe(usd('4400'));
  });

  it('a record without a rate (an older factory) is charged at the reference 20 %', () => {
    const { h, s } = gained();
    expect(s.performanceFeeBps).toBe(PERFORMANCE_FEE_BPS);
    expect(fee(h, s, usdc(200)).highWaterUsd).toBe(usd('4800'));
  });

  it('fee.rate.set changes the rate for later charges, also inside one block', () => {
    const { h, s } = gained(2000);
    const [rate, charged] = oneBlock([
      h.record('fee.rate.set', { performanceFeeBps: 1000 }),
      h.record('fee.charged', { token: USDC, amount: usdc(100).toString(), recipient: OTHER }),
    ]);
    const mid = evolve(s, rate!);
    expect(mid.performanceFeeBps).toBe(1000);
    const t = evolve(mid, charged!);
    expect(t.highWaterUsd).toBe(usd('4900'));
    // A charge at 20 % before the change, in the same block, keeps its rate.
    const b = gained(2000);
    const [early, change, late] = oneBlock([
      b.h.record('fee.charged', { token: USDC, amount: usdc(100).toString(), recipient: OTHER }),
      b.h.record('fee.rate.set', { performanceFeeBps: 1000 }),
      b.h.record('fee.charged', { token: USDC, amount: usdc(10).toString(), recipient: OTHER }),
    ]);
    const own = gained(2000);
    const alone = [
      own.h.record('fee.charged', { token: USDC, amount: usdc(100).toString(), recipient: OTHER }),
      own.h.record('fee.rate.set', { performanceFeeBps: 1000 }),
      own.h.record('fee.charged', { token: USDC, amount: usdc(10).toString(), recipient: OTHER }),
    ].reduce((x, r) => evolve(x, r), own.s);
    const shared = [early!, change!, late!].reduce((x, r) => evolve(x, r), b.s);
    expect(shared.highWaterUsd).toBe(alone.highWaterUsd);
    // 100 at 20 % settles 500 (mark 4,400); then 10 at 10 % settles 100 more (mark 4,490).
    expect(alone.highWaterUsd).toBe(usd('4490'));
  });
});
