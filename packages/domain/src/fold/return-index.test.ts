import { eth, History, oneBlock, USDC, usdc, WETH } from '@vault-yield/test-kit/domain';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFixed, SCALE } from '../math/fixed.js';
import type { VaultRecord } from '../records/envelope.js';
import { createVaultState, evolve, foldRecord } from './evolve.js';
import { MIN_RETURN_BASE_USD, nextReturnIndex } from './return-index.js';
import type { VaultState } from './state.js';

const usd = (x: string) => parseFixed(x);

describe('return index (exact, flows removed)', () => {
  it('moves with prices net of the fee accrued, not with deposits or withdrawals', () => {
    const h = new History();
    let s = createVaultState(h.created());
    expect(s.returnIndex).toBe(SCALE);
    s = evolve(s, h.deposit(WETH, eth(1))); // 2000: base 0, no sub-period
    expect(s.returnIndex).toBe(SCALE);
    s = evolve(s, h.mark({ weth: '2200' })); // +10 % gross; 20 % of the 200 gained accrues: +8 % net
    expect(s.returnIndex).toBe(SCALE + (SCALE * 8n) / 100n);
    s = evolve(s, h.deposit(USDC, usdc(800))); // 3000, flat
    s = evolve(s, h.withdrawal(USDC, usdc(300))); // 2700, flat
    expect(s.returnIndex).toBe(SCALE + (SCALE * 8n) / 100n);
  });

  it('a sub-period starting on dust (under 1 USD) is not a return', () => {
    const h = new History();
    let s = createVaultState(h.created());
    s = evolve(s, h.deposit(USDC, 1n)); // 10^-6 USD of dust
    s = evolve(s, h.deposit(USDC, usdc(1000))); // exact: flat anyway
    h.transfer(USDC, 1n);
    const dusty = evolve(createVaultState(new History().created()), new History().deposit(USDC, 5n));
    expect(nextReturnIndex(dusty, { ...dusty, valueUsd: dusty.valueUsd * 2n })).toBe(SCALE);
    expect(s.returnIndex).toBe(SCALE);
    expect(MIN_RETURN_BASE_USD).toBe(SCALE);
  });

  it('a loss beyond the whole value floors the index at 0', () => {
    const before = { valueUsd: 10n * SCALE, capitalInUsd: 0n, capitalOutUsd: 0n, returnIndex: SCALE };
    expect(nextReturnIndex(before, { valueUsd: 0n, capitalInUsd: 5n * SCALE, capitalOutUsd: 0n })).toBe(0n);
  });
});

const foldAll = (s: VaultState | undefined, rs: readonly VaultRecord[]): VaultState =>
  rs.reduce<VaultState | undefined>((acc, r) => foldRecord(acc, r), s)!;
/** The vault.created record of a vault charging `bps`. */
const rated = (h: History, bps: number): VaultRecord => {
  const c = h.created();
  return { ...c, payload: { ...c.payload, performanceFeeBps: bps } };
};

describe('return index: a block is the sub-period (holdings are end-of-block)', () => {
  it('a vault created and funded in one block starts at 1 (chained per record it fell to 0)', () => {
    const h = new History();
    const [created, funded] = oneBlock([h.created(), h.deposit(USDC, usdc(2000))]);
    const s = createVaultState(created!);
    expect(s.blockStart).toEqual({ end: null, flows: [] }); // created in the block: nothing before it
    const t = evolve(s, funded!);
    expect(t.valueUsd).toBe(usd('2000'));
    expect(t.returnIndex).toBe(SCALE);
    expect(t.blockStart).toBeUndefined();
    // then moves with prices, net of the fee accrued: 2,020 less 20 % of 20
    expect(evolve(t, h.mark({ usdc: '1.01' })).returnIndex).toBe(SCALE + (SCALE * 8n) / 1000n);
  });

  it('flows of one block are no return: two deposits, then a deposit and a withdrawal', () => {
    const h = new History();
    let s = foldAll(undefined, [h.created(), h.deposit(USDC, usdc(4000))]);
    const [a, b] = oneBlock([h.deposit(USDC, usdc(1000)), h.deposit(USDC, usdc(1000))]);
    const mid = evolve(s, a!);
    // Inside the block: the index of the last block end, which the state carries as the base.
    expect(mid.returnIndex).toBe(SCALE);
    expect(mid.blockStart).toEqual({
      end: s,
      flows: [{ kind: 'in', token: USDC, raw: usdc(1000), rateBps: 2000 }],
    });
    expect(mid.blockStart?.end).toMatchObject({
      valueUsd: usd('4000'),
      capitalInUsd: usd('4000'),
      capitalOutUsd: 0n,
      strategy: 'wide-eth',
      highWaterUsd: usd('4000'),
    });
    s = evolve(mid, b!);
    expect(s.returnIndex).toBe(SCALE); // per record it read +4.17 %
    s = foldAll(s, oneBlock([h.deposit(USDC, usdc(500)), h.withdrawal(USDC, usdc(2500))]));
    expect(s.valueUsd).toBe(usd('4000'));
    expect(s.returnIndex).toBe(SCALE);
  });

  it('flows alone never move the index, however they share blocks (property)', () => {
    const flow = fc.record({ deposit: fc.boolean(), micros: fc.integer({ min: 1, max: 5_000_000_000 }) });
    fc.assert(
      fc.property(
        fc.array(fc.array(flow, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 12 }),
        (blocks) => {
          const h = new History();
          let held = 10_000_000_000n; // 10,000 USDC
          let s = foldAll(undefined, oneBlock([h.created(), h.deposit(USDC, held)]));
          for (const block of blocks) {
            const rs: VaultRecord[] = [];
            for (const f of block) {
              const amount = f.deposit ? BigInt(f.micros) : (BigInt(f.micros) % (held / 2n)) + 1n;
              held += f.deposit ? amount : -amount;
              rs.push(f.deposit ? h.deposit(USDC, amount) : h.withdrawal(USDC, amount));
            }
            s = foldAll(s, oneBlock(rs));
            expect(s.returnIndex).toBe(SCALE);
            expect(s.blockStart).toBeUndefined();
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a vault of rate 0 holding one token returns the price ratio, whatever flows share its blocks (property)', () => {
    const block = fc.record({
      price: fc.integer({ min: 500, max: 8_000 }),
      flows: fc.array(fc.record({ deposit: fc.boolean(), milli: fc.integer({ min: 1, max: 3_000 }) }), {
        maxLength: 4,
      }),
    });
    fc.assert(
      fc.property(fc.array(block, { minLength: 1, maxLength: 10 }), (blocks) => {
        const h = new History();
        let held = eth(5);
        let s = foldAll(undefined, oneBlock([rated(h, 0), h.deposit(WETH, held)]));
        for (const b of blocks) {
          const m = { weth: String(b.price) };
          const rs: VaultRecord[] = [];
          for (const f of b.flows) {
            const amount = f.deposit ? eth(f.milli / 1000) : (eth(f.milli / 1000) % (held / 2n)) + 1n;
            held += f.deposit ? amount : -amount;
            rs.push(f.deposit ? h.deposit(WETH, amount, m) : h.withdrawal(WETH, amount, m));
          }
          rs.push(h.mark(m));
          s = foldAll(s, oneBlock(rs));
        }
        // Σ flows valued at the block's price leave (V_end − F) / V_start = p_end / p_start.
        const expected = (BigInt(blocks.at(-1)!.price) * SCALE) / 2000n;
        const diff = s.returnIndex - expected;
        expect(diff < 0n ? -diff : diff).toBeLessThanOrEqual(BigInt(blocks.length) * 10n);
      }),
      { numRuns: 200 },
    );
  });
});
