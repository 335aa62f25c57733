/**
 * Flows mean one thing each (issue #43 item 4): the owner's deposits and withdrawals are served as
 * they are, tokens received from others and balance changes no event explains apart, and an
 * outflow no event explains is a loss — netUsd drops by it (the identity netUsd = value + out − in
 * kept exactly), the snapshot flags it (`drain`, status attention), its ledger row says `loss`.
 * Before, `fees.contributedUsd` held the stranger's 500 and `withdrawnUsd` the drained 700: net 0,
 * status `aiming`, no loss anywhere.
 */

import { History, OTHER, USDC, usdc, WETH } from '@vault-yield/test-kit/domain';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toEquityPoint, toSnapshotView } from '../mapping/snapshot.js';
import { divRound, parseFixed, SCALE } from '../math/fixed.js';
import type { VaultRecord } from '../records/envelope.js';
import { snapshotView } from '../views/index.js';
import { foldRecord } from './evolve.js';
import { performanceFeeDueUsd } from './fees.js';
import { deserializeState, serializeState } from './serialize.js';
import { netUsd, strategyDeltaUsd, type VaultState } from './state.js';
import { statusOf } from './status.js';

const usd = (x: string) => parseFixed(x);
const foldAll = (s: VaultState | undefined, rs: readonly VaultRecord[]): VaultState =>
  rs.reduce<VaultState | undefined>((acc, r) => foldRecord(acc, r), s)!;
const received = (h: History, amount: bigint) => {
  h.transfer(USDC, amount);
  return h.record('transfer.received', { from: OTHER, token: USDC, amount: amount.toString() });
};

/** The issue: the owner deposits 1,000, a stranger sends 500, 700 leaves with no vault event. */
function drained(): { h: History; s: VaultState; before: VaultState } {
  const h = new History();
  const before = foldAll(undefined, [h.created(), h.deposit(USDC, usdc(1000)), received(h, usdc(500))]);
  h.transfer(USDC, -usdc(700));
  return { h, s: foldAll(before, [h.mark()]), before };
}

describe('flows by source; an unexplained outflow is a loss (#43 item 4)', () => {
  it('the issue: deposits 1,000, received 500, 700 gone — contributed 1,000, received 500, lost 700, net −700, attention', () => {
    const { s, before } = drained();
    expect(s.reconciled).toEqual([{ token: USDC, amount: -usdc(700), valueUsd: usd('700') }]);
    expect(s.valueUsd).toBe(usd('800'));
    expect(s.capitalInUsd).toBe(usd('1500'));
    expect(s.capitalOutUsd).toBe(0n);
    expect(s.lostUsd).toBe(usd('700'));
    expect(netUsd(s)).toBe(usd('-700'));
    expect(netUsd(s)).toBe(s.valueUsd + s.capitalOutUsd - s.capitalInUsd);
    expect(strategyDeltaUsd(s) + s.marketDeltaUsd).toBe(netUsd(s));
    // The fee basis keeps its level: the loss must be recovered before a fee is due again.
    expect(s.highWaterUsd).toBe(before.highWaterUsd);
    expect(performanceFeeDueUsd(s, 2000)).toBe(0n);
    // The return reads it: 1,500 → 800 with no flow.
    expect(s.returnIndex).toBe(divRound(SCALE * usd('800'), usd('1500')));

    const view = snapshotView.parse(toSnapshotView(s));
    expect(view).toMatchObject({ status: 'attention', netUsd: -700, capitalInUsd: 1500, capitalOutUsd: 0 });
    expect(view.fees).toEqual({
      contributedUsd: 1000,
      withdrawnUsd: 0,
      taxedUsd: 0,
      highWaterUsd: 1500,
      receivedUsd: 500,
      unexplainedInUsd: 0,
      unexplainedOutUsd: 700,
    });
    expect(view.drain).toEqual({ since: s.updatedAt, blockNumber: s.blockNumber, lostUsd: 700 });
    // The chart's gain net of flows shows the loss.
    const p = toEquityPoint(s);
    expect(p.valueUsd - p.capitalInUsd + p.capitalOutUsd).toBe(-700);
    // A state with a drain survives the projector's jsonb column.
    expect(deserializeState(JSON.parse(JSON.stringify(serializeState(s))))).toEqual(s);
  });

  it('a drain reads attention even once emptied, until the owner acts again', () => {
    const { h, s } = drained();
    h.transfer(USDC, -usdc(800));
    const empty = foldAll(s, [h.mark()]);
    expect(empty.valueUsd).toBe(0n);
    expect(statusOf(empty)).toBe('attention');
    expect(empty.drain?.lostUsd).toBe(usd('1500'));
    expect(empty.drain?.since).toBe(s.drain?.since);
    expect(netUsd(empty)).toBe(usd('-1500'));
    // The owner deposits again: the flag goes, the loss stays in the figures.
    const back = foldAll(empty, [h.deposit(USDC, usdc(100))]);
    expect(back.drain).toBeNull();
    expect(statusOf(back)).toBe('aiming');
    expect(back.lostUsd).toBe(usd('1500'));
    expect(toSnapshotView(back).drain).toBeNull();
    // An exit request acknowledges it too.
    const other = drained();
    const exit = foldAll(other.s, [other.h.record('exit.requested', {})]);
    expect(exit.drain).toBeNull();
    expect(statusOf(exit)).toBe('exiting');
  });

  it('an unexplained inflow stays capital in (apart from deposits); withdrawals are the owner’s alone', () => {
    const h = new History();
    let s = foldAll(undefined, [h.created(), h.deposit(USDC, usdc(1000))]);
    h.transfer(USDC, usdc(250));
    s = foldAll(s, [h.mark()]);
    s = foldAll(s, [h.withdrawal(USDC, usdc(400))]);
    expect(s.drain).toBeNull();
    expect(toSnapshotView(s).fees).toMatchObject({
      contributedUsd: 1000,
      unexplainedInUsd: 250,
      withdrawnUsd: 400,
      unexplainedOutUsd: 0,
      receivedUsd: 0,
    });
    expect(netUsd(s)).toBe(0n);
    expect(statusOf(s)).toBe('aiming');
  });

  it('property: capital in is the sum of its sources, capital out the withdrawals, net falls by exactly the losses', () => {
    const op = fc.oneof(
      fc.record({ k: fc.constant('deposit' as const), n: fc.integer({ min: 1, max: 5000 }) }),
      fc.record({ k: fc.constant('received' as const), n: fc.integer({ min: 1, max: 5000 }) }),
      fc.record({ k: fc.constant('sent' as const), n: fc.integer({ min: 1, max: 5000 }) }),
      fc.record({ k: fc.constant('withdraw' as const), pct: fc.integer({ min: 1, max: 100 }) }),
      fc.record({ k: fc.constant('drain' as const), pct: fc.integer({ min: 1, max: 100 }) }),
      fc.record({ k: fc.constant('price' as const), weth: fc.integer({ min: 500, max: 5000 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 25 }), (ops) => {
        const h = new History();
        let s = foldAll(undefined, [h.created()]);
        let lost = 0n;
        for (const o of ops) {
          const idle = s.idle[USDC] ?? 0n;
          let r: VaultRecord;
          if (o.k === 'deposit') r = h.deposit(USDC, usdc(o.n));
          else if (o.k === 'received') r = received(h, usdc(o.n));
          else if (o.k === 'sent') {
            h.transfer(WETH, BigInt(o.n) * 10n ** 15n);
            r = h.mark();
          } else if (o.k === 'withdraw') {
            if ((idle * BigInt(o.pct)) / 100n === 0n) continue;
            r = h.withdrawal(USDC, (idle * BigInt(o.pct)) / 100n);
          } else if (o.k === 'drain') {
            const gone = (idle * BigInt(o.pct)) / 100n;
            if (gone === 0n) continue;
            h.transfer(USDC, -gone);
            lost += gone * 10n ** 12n; // USDC at 1 USD
            r = h.mark();
          } else r = h.mark({ weth: String(o.weth) });
          s = foldAll(s, [r]);
          expect(s.capitalInUsd).toBe(s.depositedUsd + s.receivedUsd + s.unexplainedInUsd);
          expect(s.lostUsd).toBe(lost);
          expect(netUsd(s)).toBe(s.valueUsd + s.capitalOutUsd - s.capitalInUsd);
          const v = snapshotView.parse(toSnapshotView(s));
          expect(v.fees.withdrawnUsd).toBe(v.capitalOutUsd);
          expect(
            Math.abs(v.fees.contributedUsd + v.fees.receivedUsd! + v.fees.unexplainedInUsd! - v.capitalInUsd),
          ).toBeLessThan(0.00001);
          if (s.drain) expect(v.status).toBe('attention');
        }
      }),
      { numRuns: 60 },
    );
  });
});
