import type { EquityPoint, Snapshot, TimeInRange } from '@vault-yield/client';
import { duration, pct, tokens, usd, usdSigned } from '@vault-yield/reader/dashboard/dom';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * The dashboard's LP panel, per-position time in range and holding line checked against what the
 * API served (the snapshot's `lp`, the equity points' `holdValueUsd`), figure by figure: the
 * expected text is built here from the served JSON with the page's own formatters.
 */

const timeOf = (p: Snapshot['positions'][number]): TimeInRange | null => p.timeInRange ?? null;
/** The points of a served series that carry a holding value. */
export const withHold = (points: EquityPoint[]) => points.filter((p) => typeof p.holdValueUsd === 'number');

const share = (t: TimeInRange | null) => (t?.share == null ? '—' : pct(t.share));
const open = (t: TimeInRange | null) =>
  t === null ? 'no LP figures' : t.openMs > 0 ? `of ${duration(t.openMs)} open` : 'never open';

/** The LP panel and each position's time in range show exactly the snapshot's figures. */
export async function expectLp(page: Page, s: Snapshot): Promise<void> {
  const lp = s.lp ?? null;
  const strong = async (id: string) =>
    (await page.locator(`#lp [data-testid="${id}"] strong`).textContent())?.trim();
  const small = async (id: string) =>
    (await page.locator(`#lp [data-testid="${id}"] small`).textContent())?.trim();
  expect(await page.locator('[data-testid="position-time-in-range"]').allTextContents()).toEqual(
    s.positions.map((p) => share(timeOf(p))),
  );
  expect(
    (await page.locator('.position-time').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim()),
  ).toEqual(s.positions.map((p) => `time in range ${share(timeOf(p))} ${open(timeOf(p))}`));
  if (lp === null) {
    expect(await page.locator('[data-testid="lp-missing"]').count()).toBe(1);
    expect(await page.locator('#lp .stat').count()).toBe(0);
    return;
  }
  expect(await page.locator('[data-testid="lp-missing"]').count()).toBe(0);
  const apr = (x: number | null) => (x === null ? '—' : pct(x));
  expect({
    hold: await strong('lp-hold'),
    lead: await strong('lp-lead'),
    fees: await strong('lp-fees-earned'),
    feesSub: await small('lp-fees-earned'),
    feeApr: await strong('lp-fee-apr'),
    rewards: await strong('lp-rewards-earned'),
    rewardsSub: await small('lp-rewards-earned'),
    rewardApr: await strong('lp-reward-apr'),
    divergence: await strong('lp-divergence'),
    divergenceSub: await small('lp-divergence'),
    timeInRange: await strong('lp-time-in-range'),
    timeInRangeSub: await small('lp-time-in-range'),
    rebalances: await strong('lp-rebalances'),
    swapCost: await strong('lp-swap-cost'),
    swapCostSub: await small('lp-swap-cost'),
    drawdownMax: await strong('lp-drawdown-max'),
    drawdownCurrent: await strong('lp-drawdown-current'),
  }).toEqual({
    hold: usd(lp.hold.valueUsd),
    lead: usdSigned(lp.hold.leadUsd),
    fees: usd(lp.tradingFees.earnedUsd),
    feesSub: `uncollected ${usd(lp.tradingFees.uncollectedUsd)}`,
    feeApr: apr(lp.tradingFees.apr),
    rewards: usd(lp.rewards.earnedUsd),
    rewardsSub: `claimed ${usd(lp.rewards.claimedUsd)} · pending ${usd(lp.rewards.pendingUsd)}`,
    rewardApr: apr(lp.rewards.apr),
    divergence: usdSigned(lp.divergence.usd),
    divergenceSub: `realised ${usdSigned(lp.divergence.realisedUsd)} · unrealised ${usdSigned(lp.divergence.unrealisedUsd)}`,
    timeInRange: share(lp.timeInRange),
    timeInRangeSub: open(lp.timeInRange),
    rebalances: String(lp.rebalances.count),
    swapCost: usd(lp.rebalances.costUsd),
    swapCostSub: `${lp.rebalances.swaps} swaps · pool fees ${usd(lp.rebalances.swapFeesUsd)} · impact ${usdSigned(lp.rebalances.priceImpactUsd)}`,
    drawdownMax: pct(lp.drawdown.max),
    drawdownCurrent: pct(lp.drawdown.current),
  });

  // The attribution: five parts in order, then net; the parts add up to net (micro-dollars).
  const a = lp.attribution;
  const parts = [a.tradingFeesUsd, a.rewardsUsd, a.performanceFeesUsd, a.lossesUsd, a.priceUsd];
  const micros = (x: number) => Math.round(x * 1e6);
  expect(parts.reduce((sum, x) => sum + micros(x), 0)).toBe(micros(s.netUsd));
  const rows = page.locator('#lp [data-testid="attribution"]');
  expect(await rows.evaluateAll((trs) => trs.map((t) => t.getAttribute('data-part')))).toEqual([
    'tradingFees',
    'rewards',
    'performanceFees',
    'losses',
    'price',
  ]);
  expect(await rows.locator('td.num').allTextContents()).toEqual(parts.map(usdSigned));
  expect(await page.locator('#lp [data-testid="attribution-net"] th.num').textContent()).toBe(
    usdSigned(s.netUsd),
  );

  // PnL in token terms: one row per token, in the served order.
  const fees = new Map(lp.tradingFees.tokens.map((t) => [t.token, t.earned]));
  const tokenRows = page.locator('#lp [data-testid="lp-token"]');
  expect(await tokenRows.evaluateAll((trs) => trs.map((t) => t.getAttribute('data-token')))).toEqual(
    lp.tokens.map((t) => t.token),
  );
  const cells = await tokenRows.evaluateAll((trs) =>
    trs.map((t) => [...t.querySelectorAll('td')].map((td) => td.textContent)),
  );
  expect(cells).toEqual(
    lp.tokens.map((t) => [
      t.symbol || t.token,
      tokens(t.held),
      tokens(t.in),
      tokens(t.out),
      `${t.pnl.startsWith('-') || /^[0.]+$/.test(t.pnl) ? '' : '+'}${tokens(t.pnl)}`,
      fees.has(t.token) ? tokens(fees.get(t.token)!) : '—',
    ]),
  );
}

/** The chart draws the holding line exactly where the served points carry a holding value. */
export async function expectHoldLine(page: Page, points: EquityPoint[]): Promise<void> {
  await page.waitForFunction(
    (n) => document.getElementById('equity')?.dataset.points === String(n),
    points.length,
  );
  const held = withHold(points).length;
  expect(await page.locator('#equity').getAttribute('data-hold')).toBe(String(held));
  const legend = await page.locator('#equity .u-legend .u-series th').allTextContents();
  expect(legend.map((t) => t.trim()).includes('Holding')).toBe(held > 0);
  expect(await page.locator('#equity-note').isVisible()).toBe(held > 0);
}
