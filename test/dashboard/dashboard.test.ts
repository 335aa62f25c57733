import {
  createClient,
  type EventsQuery,
  type LedgerRow,
  nextCursor,
  ok,
  type Snapshot,
  type VaultSummary,
} from '@vault-yield/client';
import { price, short, usd, usdSigned } from '@vault-yield/reader/dashboard/dom';
import { startBoth } from '@vault-yield/test-kit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, openPage, shot } from './browser.js';
import { type DevStack, startDevStack } from './dev-stack.js';

/**
 * The dashboard in a real browser (Debian's chromium via playwright-core) against the dev stack
 * (`npm start`: anvil, the demo scenario, Kafka, indexer, projector, reader): every panel shows
 * the demo vaults' data as the API serves it, filters and paging work, no console errors, at
 * 1280 and 390 pixels wide. Screenshots go to test/dashboard/artifacts/.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const texts = (page: Page, selector: string) => page.locator(selector).allTextContents();

describe('dashboard on the dev stack', () => {
  let dev: DevStack;
  let browser: Browser;
  let api: ReturnType<typeof createClient>;
  let vaults: VaultSummary[] = [];

  /** Every ledger row of a vault through the API, newest first (the expected side). */
  async function allEvents(vault: string, query: EventsQuery = {}): Promise<LedgerRow[]> {
    const rows: LedgerRow[] = [];
    let cursor: string | undefined;
    do {
      const res = await api.v1.vault[':address'].events.$get({
        param: { address: vault },
        query: { limit: 500, ...query, ...(cursor ? { cursor } : {}) },
      });
      rows.push(...(await ok(res)));
      cursor = nextCursor(res);
    } while (cursor);
    return rows;
  }

  beforeAll(async () => {
    await startBoth(startDevStack(), launch(), (d, b) => {
      if (d) dev = d;
      if (b) browser = b;
    });
    api = createClient(dev.url);
    // The projector catches up after the URL is printed: wait until the vault list and every
    // vault's ledger stop changing (with --no-live nothing moves once the demo is folded).
    let last = '';
    for (let i = 0; i < 240; i++) {
      vaults = await ok(await api.v1.vaults.$get({ query: {} }));
      const counts = await Promise.all(vaults.map((v) => allEvents(v.vault).then((r) => r.length)));
      const now = JSON.stringify([vaults, counts]);
      if (vaults.length > 0 && counts.every((n) => n > 0) && now === last) break;
      last = now;
      await sleep(1000);
    }
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await dev?.stop();
  }, 90_000);

  it('npm start prints the dashboard URL first', () => {
    expect(dev.banner[0]).toMatch(/^dashboard:\s+http:\/\/\S+\/dashboard$/);
    expect(dev.banner.slice(1).map((l) => l.split(':')[0])).toEqual(
      expect.arrayContaining(['reader', 'docs']),
    );
  });

  it('1280 px: every panel shows the demo data; filters, paging and look-up work; no console errors', async () => {
    expect(vaults.length).toBeGreaterThanOrEqual(3);
    const { page, problems, settled } = await openPage(browser, dev.url, 1280);
    await page.goto(`${dev.url}/dashboard`);
    await page.waitForSelector('body[data-ready]');

    // Vault list: every demo vault, with its value and net.
    const rows = page.locator('#vaults tbody tr');
    expect(await rows.count()).toBe(vaults.length);
    for (const v of vaults) {
      const row = page.locator(`#vaults tr[data-vault="${v.vault}"]`);
      const cells = await row.locator('td').allTextContents();
      expect(cells).toEqual(
        expect.arrayContaining([short(v.vault), v.strategy, v.status, usd(v.valueUsd), usdSigned(v.netUsd)]),
      );
    }

    // Each vault in turn: the view built from its snapshot, its chart, its ledger.
    for (const v of vaults) {
      await page.locator(`#vaults tr[data-vault="${v.vault}"]`).click();
      await page.waitForFunction(
        (a) => document.querySelector('#vault-title .mono')?.textContent === a,
        v.vault,
      );
      const snap: Snapshot = await ok(
        await api.v1.vault[':address'].snapshot.$get({ param: { address: v.vault } }),
      );
      await expectSnapshot(page, snap);
      const points = await ok(
        await api.v1.vault[':address'].equity.$get({ param: { address: v.vault }, query: { points: 300 } }),
      );
      await page.waitForFunction(
        (n) => document.getElementById('equity')?.dataset.points === String(n),
        points.length,
      );
      expect(await page.locator('#equity canvas').count()).toBe(1);
      const deposits = points.filter((p, i) =>
        i === 0 ? p.capitalInUsd > 0 : p.capitalInUsd > points[i - 1]!.capitalInUsd,
      );
      expect(await page.locator('#equity').getAttribute('data-deposits')).toBe(String(deposits.length));
      const events = await allEvents(v.vault);
      await expectLedgerPage(page, events.slice(0, 10));
    }

    // Ledger paging on the vault with the most events: older, older…, then back to newer.
    const counts = await Promise.all(vaults.map((v) => allEvents(v.vault)));
    const busiest = counts.reduce((a, b) => (b.length > a.length ? b : a));
    const vault = busiest[0]!.vault;
    expect(busiest.length).toBeGreaterThan(10);
    await page.locator(`#vaults tr[data-vault="${vault}"]`).click();
    await expectLedgerPage(page, busiest.slice(0, 10));
    for (let p = 1; p * 10 < busiest.length; p++) {
      await page.locator('#ledger-older').click();
      await page.waitForFunction(
        (n) => document.getElementById('ledger-page')?.textContent === `page ${n}`,
        p + 1,
      );
      await expectLedgerPage(page, busiest.slice(p * 10, p * 10 + 10));
    }
    expect(await page.locator('#ledger-older').isDisabled()).toBe(true);
    await page.locator('#ledger-newer').click();
    await page.waitForFunction(
      (n) => document.getElementById('ledger-page')?.textContent === `page ${n}`,
      Math.ceil(busiest.length / 10) - 1,
    );

    // Type filter: only deposits, as many as the API has.
    await page.selectOption('#ledger-type', 'deposit');
    await page.locator('#ledger-form button[type=submit]').click();
    const deposits = await allEvents(vault, { type: 'deposit' });
    expect(deposits.length).toBeGreaterThan(0);
    await expectLedgerPage(page, deposits.slice(0, 10));
    // Each deposit reads in whole tokens with its symbol and its USD value at the block, as the API says.
    const first = deposits[0]!.amounts![0]!;
    const cell = (await page.locator('#ledger tbody tr [data-testid=amounts]').first().textContent()) ?? '';
    expect(cell).toMatch(new RegExp(`^[\\d,.]+ ${first.symbol} \\(\\$[\\d,.]+\\)$`));
    expect(cell.replace(/,/g, '')).toContain(`${Number(first.amount)}`.slice(0, 4));
    expect(cell).not.toMatch(/"amount"|000000000/); // no raw base units
    // Times in the browser's zone on request (UTC by default).
    expect(await page.locator('#ledger thead th').first().textContent()).toBe('Time (UTC)');
    await page.selectOption('#time-zone', 'local');
    await page.waitForFunction(
      () => document.querySelector('#ledger thead th')?.textContent === 'Time (local)',
    );
    await page.selectOption('#time-zone', 'utc');
    await page.waitForFunction(
      () => document.querySelector('#ledger thead th')?.textContent === 'Time (UTC)',
    );

    // Time bounds: from the second-newest event's second (inclusive) on, all types.
    await page.selectOption('#ledger-type', '');
    const from = new Date(Math.floor(busiest[Math.min(5, busiest.length - 1)]!.ts / 1000) * 1000);
    await page.fill('#ledger-since', from.toISOString().slice(0, 19));
    await page.locator('#ledger-form button[type=submit]').click();
    const bounded = await allEvents(vault, { since: String(from.getTime()) });
    expect(bounded.length).toBeLessThan(busiest.length);
    await expectLedgerPage(page, bounded.slice(0, 10));
    await page.fill('#ledger-since', '');

    // Tx look-up from a ledger row: every row of that transaction, across vaults.
    const tx = busiest[0]!.txHash;
    await page.locator(`#ledger button[title="${tx}"]`).first().click();
    const txRows = await ok(await api.v1.tx[':hash'].$get({ param: { hash: tx } }));
    await page.waitForFunction((n) => document.querySelectorAll('#tx tbody tr').length === n, txRows.length);
    expect(await page.inputValue('#tx-hash')).toBe(tx);
    expect(await texts(page, '#tx tbody tr td:nth-child(2)')).toEqual(txRows.map((r) => r.type));

    // Owner filter: one owner's vaults only.
    const owner = vaults[1]!.owner;
    await page.fill('#owner', owner.toUpperCase().replace('0X', '0x'));
    await page.locator('#owner-form button[type=submit]').click();
    const mine = vaults.filter((v) => v.owner === owner);
    await page.waitForFunction(
      (n) => document.querySelectorAll('#vaults tbody tr').length === n,
      mine.length,
    );
    expect(
      await page
        .locator('#vaults tbody tr')
        .evaluateAll((trs) => trs.map((t) => t.getAttribute('data-vault'))),
    ).toEqual(mine.map((v) => v.vault));
    await page.locator('#owner-clear').click();
    await page.waitForFunction(
      (n) => document.querySelectorAll('#vaults tbody tr').length === n,
      vaults.length,
    );

    await page.locator(`#vaults tr[data-vault="${vaults[0]!.vault}"]`).click();
    await page.waitForFunction(
      (a) => document.querySelector('#vault-title .mono')?.textContent === a,
      vaults[0]!.vault,
    );
    await settled();
    await shot(page, 'dashboard-1280');
    expect(problems).toEqual([]);
    await page.close();
  }, 180_000);

  it('390 px: the same panels, nothing wider than the screen, no console errors', async () => {
    const { page, problems, settled } = await openPage(browser, dev.url, 390);
    await page.goto(`${dev.url}/dashboard`);
    await page.waitForSelector('body[data-ready]');
    const snap = await ok(
      await api.v1.vault[':address'].snapshot.$get({ param: { address: vaults[0]!.vault } }),
    );
    await expectSnapshot(page, snap);
    for (const panel of ['list', 'vault', 'equity', 'positions', 'fees', 'ledger', 'tx']) {
      const box = await page.locator(`#${panel}-panel`).boundingBox();
      expect(box, panel).not.toBeNull();
      expect(box!.x).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width, panel).toBeLessThanOrEqual(390);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await page.locator('#ledger tbody tr').count()).toBeGreaterThan(0);
    await settled();
    await shot(page, 'dashboard-390');
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);

  it('/docs: the Scalar reference renders the document offline, and "try it" calls this reader', async () => {
    const { page, problems } = await openPage(browser, dev.url, 1280);
    await page.goto(`${dev.url}/docs`);
    await page.getByText('Activity ledger, newest first, cursor-paginated').first().waitFor();
    await page.getByText('Vault Yield Service — read API').first().waitFor();
    await shot(page, 'docs-1280', false);
    await page.goto(`${dev.url}/docs#tag/operations/GET/health`);
    await page.getByText('Liveness: the process answers').first().waitFor();
    // Try it: open the request client on /health and send it; the answer comes from this reader.
    const operation = page
      .locator('section')
      .filter({ hasText: 'Liveness: the process answers' })
      .filter({ has: page.locator('button:has-text("Test Request")') })
      .last();
    await operation.locator('button:has-text("Test Request")').first().click();
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${dev.url}/health`),
      page.getByRole('button', { name: /^send/i }).first().click(),
    ]);
    expect(answer.status()).toBe(200);
    expect(await answer.json()).toEqual({ status: 'ok' });
    await page.getByText('200 OK').first().waitFor();
    await shot(page, 'docs-try-it-1280', false);
    expect(problems).toEqual([]);
    await page.close();
  }, 120_000);
});

/** The vault view shows the snapshot's own figures. */
async function expectSnapshot(page: Page, s: Snapshot): Promise<void> {
  await page.waitForFunction((a) => document.querySelector('#vault-title .mono')?.textContent === a, s.vault);
  const value = async (id: string) =>
    (await page.locator(`[data-testid="${id}"] strong`).textContent())?.trim();
  expect(await value('value')).toBe(usd(s.valueUsd));
  expect(await value('capital-in')).toBe(usd(s.capitalInUsd));
  expect(await value('capital-out')).toBe(usd(s.capitalOutUsd));
  expect(await value('net')).toBe(usdSigned(s.netUsd));
  expect(await value('strategy-delta')).toBe(usdSigned(s.strategyDeltaUsd));
  expect(await value('market-delta')).toBe(usdSigned(s.marketDeltaUsd));
  expect(await value('fees-taxed')).toBe(usd(s.fees.taxedUsd));
  expect(await page.locator('[data-testid="status"]').textContent()).toBe(s.status);
  expect(await page.locator('[data-testid="suspension"]').count()).toBe(s.suspension ? 1 : 0);
  expect(await page.locator('[data-testid="position"]').count()).toBe(s.positions.length);
  expect(await texts(page, '[data-testid="current-price"]')).toEqual(
    s.positions.map((p) => `current ${price(p.range.current)}`),
  );
}

/** The ledger table shows exactly these rows (types and tx hashes, in order). */
async function expectLedgerPage(page: Page, rows: LedgerRow[]): Promise<void> {
  const want = rows.map((r) => `${r.type} ${r.txHash}`);
  await page.waitForFunction(
    (w) =>
      JSON.stringify(
        [...document.querySelectorAll('#ledger tbody tr')].map(
          (tr) => `${tr.getAttribute('data-type')} ${tr.querySelector('button')?.getAttribute('title')}`,
        ),
      ) === JSON.stringify(w),
    want,
    { timeout: 10_000 },
  );
}
