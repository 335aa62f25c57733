import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import {
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

/**
 * States the demo does not end in, on a reader over fixture rows: a suspended vault shows its
 * reason, an out-of-range position its marker outside the range, and snapshot fields the page
 * does not know (the lead adds fields additively) are listed as plain text, never as markup.
 */
describe('dashboard: suspension, out of range, unknown snapshot fields', () => {
  let db: TestDatabase;
  let w: Writer;
  let r: TestReader;
  let browser: Browser;
  const suspended = makeSnapshot({ status: 'suspended', suspensionReason: 'oracle deviation > 2%' });
  const attention = makeSnapshot({ status: 'attention', owner: suspended.owner });
  // A feed that answered no price: the last valid one is used, and the page says so.
  const invalid = {
    ...makeSnapshot({ status: 'earning', owner: suspended.owner }),
    stalePrices: [
      {
        token: `0x${'e1'.repeat(20)}`,
        symbol: 'WETH',
        feed: `0x${'f1'.repeat(20)}`,
        priceUpdatedAt: 1_735_689_000_000,
        ageSeconds: 600,
        heartbeatSeconds: 3600,
        reason: 'invalid' as const,
      },
    ],
  };
  const extra = {
    behind: true,
    stalePrices: [{ ageS: 7200, token: 'WETH' }], // jsonb order: keys sorted
    note: '<img src=x onerror="window.__injected = 1">',
  };

  beforeAll(async () => {
    db = await createTestDatabase('dashboard-states');
    w = writer(db.writerUrl, db.schema);
    r = await startReader(db);
    browser = await launch();
    await insertSnapshots(w, [{ ...suspended, ...extra } as unknown as typeof suspended, attention, invalid]);
  });
  afterAll(async () => {
    await browser?.close();
    await r?.stop();
    await w?.end();
    await db?.drop();
  });

  it('renders them without console errors', async () => {
    const { page, problems } = await openPage(browser, r.url, 1280);
    await page.goto(`${r.url}/dashboard#vault=${suspended.vault}`);
    await page.waitForSelector('body[data-ready]');
    expect(await page.locator('#vault-title .mono').textContent()).toBe(suspended.vault);
    expect(await page.locator('[data-testid="status"]').textContent()).toBe('suspended');
    expect(await page.locator('[data-testid="suspension"]').textContent()).toContain('oracle deviation > 2%');

    // Known flags: stale prices and `behind` show as alerts (shapes it does not expect as text).
    expect(await page.locator('[data-testid="stale"]').textContent()).toContain('WETH');
    expect(await page.locator('[data-testid="behind"]').count()).toBe(1);
    // Unknown fields: listed by name with their JSON as text; the markup in one stays text.
    await page.locator('#fees-panel details summary').click();
    const other = await page.locator('#other .kv').allTextContents();
    expect(other).toEqual([`note${JSON.stringify(extra.note)}`]);
    expect(await page.locator('#other img').count()).toBe(0);
    expect(await page.evaluate(() => (window as { __injected?: number }).__injected)).toBeUndefined();
    await shot(page, 'suspended-1280');

    // attention: one position in range, one out, its marker drawn as out of range.
    await page.locator(`#vaults tr[data-vault$=":${attention.vault}"]`).click();
    await page.waitForFunction(
      (a) => document.querySelector('#vault-title .mono')?.textContent === a,
      attention.vault,
    );
    expect(await page.locator('[data-testid="position"]').count()).toBe(2);
    expect(await page.locator('.rangebar .marker.out').count()).toBe(1);
    expect(await page.locator('.rangebar .marker.in').count()).toBe(1);
    expect(await page.locator('[data-testid="suspension"]').count()).toBe(0);
    expect(await page.locator('[data-testid="stale"]').count()).toBe(0);
    expect(await page.locator('#fees-panel details').isHidden()).toBe(true);
    // No equity points and no ledger rows for fixture vaults: the panels say so.
    expect(await page.locator('#equity .empty').textContent()).toBe('No equity points yet.');
    expect(await page.locator('#ledger .empty').textContent()).toBe('No events.');

    await shot(page, 'attention-1280');

    await page.locator(`#vaults tr[data-vault$=":${invalid.vault}"]`).click();
    await page.waitForFunction(
      (a) => document.querySelector('#vault-title .mono')?.textContent === a,
      invalid.vault,
    );
    expect(await page.locator('[data-testid="stale"]').textContent()).toBe(
      'Stale or invalid prices: WETH (no valid answer: last valid price used)',
    );
    expect(await page.locator('#other .kv').count()).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it('serves the page, its script and styles with ETags and 304s', async () => {
    for (const [path, type] of [
      ['/dashboard', /^text\/html/],
      ['/dashboard/app.js', /^text\/javascript/],
      ['/dashboard/app.css', /^text\/css/],
      ['/dashboard/uplot.css', /^text\/css/],
    ] as const) {
      const res = await fetch(`${r.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toMatch(type);
      const again = await fetch(`${r.url}${path}`, {
        headers: { 'If-None-Match': res.headers.get('etag')! },
      });
      expect(again.status, path).toBe(304);
    }
    const js = await (await fetch(`${r.url}/dashboard/app.js`)).text();
    expect(js).not.toMatch(/https?:\/\/(?!www\.w3\.org)[a-z]/); // no CDN, nothing remote
  });
});
