import type { EquityPoint, Snapshot } from '@vault-yield/client';
import { type LpView, snapshotView } from '@vault-yield/domain';
import { usd } from '@vault-yield/reader/dashboard/dom';
import { hexToBytes } from '@vault-yield/store';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import {
  insertEquity,
  insertSnapshots,
  makeSnapshot,
  startReader,
  type TestReader,
  type Writer,
  writer,
} from '@vault-yield/test-kit/reader';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, openPage, shot } from './browser.js';
import { expectHoldLine, expectLp, withHold } from './lp-expect.js';

/**
 * The LP figures on the dashboard (issue #46 item 9), on a reader over fixture rows: a vault
 * folded at fold version 5 shows its snapshot's `lp` figure by figure (the panel, each position's
 * time in range) and the holding line where its equity points carry `holdValueUsd`; a vault
 * folded before (no `lp`, points without a holding value) shows a note and "—", the chart
 * without the line, and nothing breaks. The figures themselves are the fold's (checked in
 * packages/domain and test/reader); the dev-stack test (dashboard.test.ts) checks the page
 * against a folded demo.
 */

const WETH = `0x${'c0'.repeat(20)}`;
const USDC = `0x${'a0'.repeat(20)}`;
const ARB = `0x${'b0'.repeat(20)}`;
const HOUR = 3_600_000;

/** A snapshot with LP figures whose attribution adds up to its netUsd (500.123456). */
function withLp() {
  const base = makeSnapshot({ status: 'earning' });
  const lp: LpView = {
    hold: { valueUsd: 10_212.345678, leadUsd: 287.777778 },
    tradingFees: {
      earnedUsd: 420.5,
      uncollectedUsd: 1,
      apr: 0.184321,
      tokens: [
        { token: WETH, symbol: 'WETH', earned: '0.1052', collected: '0.105', uncollected: '0.0002' },
        { token: USDC, symbol: 'USDC', earned: '210.25', collected: '209.75', uncollected: '0.5' },
      ],
    },
    rewards: {
      earnedUsd: 2.5,
      claimedUsd: 0,
      pendingUsd: 2.5,
      apr: null,
      tokens: [{ token: ARB, symbol: 'ARB', claimed: '0', pending: '3.125' }],
    },
    attribution: {
      tradingFeesUsd: 420.5,
      rewardsUsd: 2.5,
      performanceFeesUsd: -12.5,
      lossesUsd: 0,
      priceUsd: 89.623456,
    },
    divergence: { usd: -134.25, realisedUsd: -34.125, unrealisedUsd: -100.125 },
    timeInRange: { share: 0.8125, inRangeMs: 26 * HOUR, openMs: 32 * HOUR },
    rebalances: { count: 3, swaps: 2, costUsd: 1.75, swapFeesUsd: 1.5, priceImpactUsd: 0.25 },
    drawdown: { max: 0.042117, current: 0.010203 },
    tokens: [
      { token: WETH, symbol: 'WETH', held: '2.5', in: '2', out: '0', pnl: '0.5' },
      { token: USDC, symbol: 'USDC', held: '4012.5', in: '5000', out: '0', pnl: '-987.5' },
      { token: ARB, symbol: 'ARB', held: '3.125', in: '0', out: '0', pnl: '3.125' },
    ],
  };
  const positions = base.positions.map((p, i) => ({
    ...p,
    timeInRange:
      i === 0
        ? { share: 0.875, inRangeMs: 28 * HOUR, openMs: 32 * HOUR }
        : { share: null, inRangeMs: 0, openMs: 0 },
  }));
  // As the API validates it: a fixture the schema refuses fails here, not in the page.
  return snapshotView.parse({ ...base, positions, lp });
}

describe('dashboard: the LP figures', () => {
  let db: TestDatabase;
  let w: Writer;
  let r: TestReader;
  let browser: Browser;
  const v5 = withLp();
  // Folded before fold version 5: no `lp`, no position time in range.
  const v4 = makeSnapshot({ status: 'attention', owner: v5.owner });
  const day = (i: number) => 1_735_000_000_000 + i * 86_400_000;

  beforeAll(async () => {
    db = await createTestDatabase('dashboard-lp');
    w = writer(db.writerUrl, db.schema);
    await insertSnapshots(w, [v5, v4]);
    for (const s of [v5, v4])
      await insertEquity(
        w,
        s.vault,
        [0, 1, 2, 3, 4, 5].map((i) => ({
          ts: day(i),
          valueUsd: String(10_000 + i * 100),
          capitalInUsd: i < 3 ? '10000' : '10500',
          capitalOutUsd: i < 5 ? '0' : '200',
        })),
      );
    // The v5 vault's later points carry a holding value; its first two (as a vault whose points
    // began before the upgrade) and every point of the v4 vault have none.
    await w.query(
      `update equity_points set hold_usd = value_usd - 50 - (ts - $2::bigint) / 86400000 * 10
       where vault = ${hexToBytes('$1::text')} and ts >= $2::bigint`,
      [v5.vault, day(2)],
    );
    r = await startReader(db);
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await r?.stop();
    await w?.end();
    await db?.drop();
  });

  /** The snapshot and series as the API serves them (each checked against the OpenAPI document). */
  async function served(vault: string) {
    const snap = (await r.get(`/v1/vault/${vault}/snapshot`)).body as Snapshot;
    const points = (await r.get(`/v1/vault/${vault}/equity?points=300`)).body as EquityPoint[];
    return { snap, points };
  }

  it('shows the snapshot’s lp, each position’s time in range and the holding line where points carry it', async () => {
    const { snap, points } = await served(v5.id);
    expect(snap.lp).toEqual(v5.lp);
    expect(withHold(points).map((p) => p.ts)).toEqual([2, 3, 4, 5].map(day));

    const { page, problems, settled } = await openPage(browser, r.url, 1280);
    await page.goto(`${r.url}/dashboard#vault=${v5.id}`);
    await page.waitForSelector('body[data-ready]');
    await page.waitForFunction(
      (a) => document.querySelector('#vault-title .mono')?.textContent === a,
      v5.vault,
    );
    await expectLp(page, snap);
    await expectHoldLine(page, points);
    // Spot checks of the formatting the helper builds from the same formatters.
    expect(await page.locator('[data-testid="lp-fee-apr"] strong').textContent()).toBe('18.43%');
    expect(await page.locator('[data-testid="lp-reward-apr"] strong').textContent()).toBe('—');
    expect(await page.locator('[data-testid="lp-time-in-range"] small').textContent()).toBe(
      'of 1 d 8 h open',
    );
    expect(await page.locator('[data-testid="position-time-in-range"]').allTextContents()).toEqual([
      '87.50%',
      '—',
    ]);
    // The cursor at the last point: the legend reads both lines there, holding net of the same
    // flows, the gap between them the vault's lead over holding at that point.
    const last = points.at(-1)!;
    const hold = last.holdValueUsd!;
    const over = (await page.locator('#equity .u-over').boundingBox())!;
    await page.mouse.move(over.x + over.width - 1, over.y + over.height / 2);
    const legend = async () =>
      Object.fromEntries(
        await page
          .locator('#equity .u-legend .u-series')
          .evaluateAll((rows) =>
            rows.map((r) => [r.querySelector('th')?.textContent?.trim(), r.querySelector('td')?.textContent]),
          ),
      );
    await expect
      .poll(async () => (await legend())['Net of flows'])
      .toBe(usd(last.valueUsd - last.capitalInUsd + last.capitalOutUsd));
    expect((await legend()).Holding).toBe(usd(hold - last.capitalInUsd + last.capitalOutUsd));
    expect(last.valueUsd - hold).toBe(80);
    await settled();
    await shot(page, 'lp-1280');

    // The narrow layout: the panel fits the screen.
    const narrow = await openPage(browser, r.url, 390);
    await narrow.page.goto(`${r.url}/dashboard#vault=${v5.id}`);
    await narrow.page.waitForSelector('#lp [data-testid="lp-hold"]');
    const box = await narrow.page.locator('#lp-panel').boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    expect(await narrow.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await narrow.settled();
    await shot(narrow.page, 'lp-390');
    expect(narrow.problems).toEqual([]);
    await narrow.page.close();

    // The v4 vault: a note, "—" per position, no holding line; then back to the v5 vault.
    const old = await served(v4.id);
    expect(old.snap.lp).toBeUndefined();
    expect(withHold(old.points)).toEqual([]);
    await page.locator(`#vaults tr[data-vault="${v4.id}"]`).click();
    await page.waitForFunction(
      (a) => document.querySelector('#vault-title .mono')?.textContent === a,
      v4.vault,
    );
    await expectLp(page, old.snap);
    await expectHoldLine(page, old.points);
    expect(await page.locator('[data-testid="lp-missing"]').textContent()).toContain('fold version 5');
    expect(await page.locator('[data-testid="position-time-in-range"]').allTextContents()).toEqual([
      '—',
      '—',
    ]);
    // lp is a known field: never listed under "Other fields".
    expect(await page.locator('#other .kv .mono').allTextContents()).not.toContain('lp');
    await shot(page, 'lp-missing-1280');

    await page.locator(`#vaults tr[data-vault="${v5.id}"]`).click();
    await page.waitForSelector('#lp [data-testid="lp-hold"]');
    await expectLp(page, snap);
    await expectHoldLine(page, points);
    expect(problems).toEqual([]);
    await page.close();
  }, 90_000);

  it('a snapshot with lp null (a vault folded before fold version 5, re-projected) shows the note', async () => {
    const nulled = { ...makeSnapshot({ status: 'earning', owner: v5.owner }), lp: null };
    await insertSnapshots(w, [nulled]);
    const { snap } = await served(nulled.id);
    expect(snap.lp).toBeNull();
    const { page, problems } = await openPage(browser, r.url, 1280);
    await page.goto(`${r.url}/dashboard#vault=${nulled.id}`);
    await page.waitForSelector('body[data-ready]');
    await page.waitForFunction(
      (a) => document.querySelector('#vault-title .mono')?.textContent === a,
      nulled.vault,
    );
    await expectLp(page, snap);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
