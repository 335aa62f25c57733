import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import {
  insertSnapshots,
  makeSnapshot,
  randomAddress,
  startReader,
  type TestReader,
  type Writer,
  writer,
} from '@vault-yield/test-kit/reader';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, openPage } from './browser.js';

/**
 * Many chains on the dashboard (issue #45): the same address is a vault on two chains. The list
 * shows each with its chain, a chain filter keeps one chain (and goes into the URL), and a vault
 * named by its id in the URL opens that chain's vault (a bare address there would be a 409).
 */
describe('dashboard: the same address on two chains', () => {
  let db: TestDatabase;
  let w: Writer;
  let r: TestReader;
  let browser: Browser;
  const SHARED = randomAddress();
  const onOp = makeSnapshot({ chainId: 10, vault: SHARED, valueMicros: 1_000_000_000 });
  const onBase = makeSnapshot({ chainId: 8453, vault: SHARED, valueMicros: 7_000_000_000 });

  beforeAll(async () => {
    db = await createTestDatabase('dashboard-chains');
    w = writer(db.writerUrl, db.schema);
    await insertSnapshots(w, [onOp, onBase]);
    r = await startReader(db);
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await r?.stop();
    await w?.end();
    await db?.drop();
  });

  it('lists each chain’s vault, filters by chain, and opens the vault the URL names by id', async () => {
    const { page, problems } = await openPage(browser, r.url, 1280);
    await page.goto(`${r.url}/dashboard#vault=${onBase.id}`);
    await page.waitForSelector('body[data-ready]');
    // The vault of the id, not the other chain's (nor a 409).
    expect(await page.locator('[data-testid="vault-chain"]').textContent()).toBe('chain 8453');
    expect(await page.locator('[data-testid="value"] strong').textContent()).toContain('7,000');
    const rows = page.locator('#vaults tbody tr');
    expect(await rows.evaluateAll((trs) => trs.map((t) => t.getAttribute('data-vault')))).toEqual([
      onOp.id,
      onBase.id,
    ]);
    expect(await page.locator('#vaults [data-testid="chain"]').allTextContents()).toEqual(['10', '8453']);
    expect(await page.locator(`#vaults tr[data-vault="${onBase.id}"]`).getAttribute('class')).toContain(
      'selected',
    );
    // Choosing the other row opens that chain's vault.
    await page.locator(`#vaults tr[data-vault="${onOp.id}"]`).click();
    await page.waitForFunction(
      () => document.querySelector('[data-testid="vault-chain"]')?.textContent === 'chain 10',
    );
    // The chain filter: one chain's vaults, the chain in the URL.
    expect(await page.locator('#chain-filter').isVisible()).toBe(true);
    await page.selectOption('#chain', '8453');
    await page.waitForFunction(() => document.querySelectorAll('#vaults tbody tr').length === 1);
    expect(await rows.evaluateAll((trs) => trs.map((t) => t.getAttribute('data-vault')))).toEqual([
      onBase.id,
    ]);
    expect(new URLSearchParams(new URL(page.url()).hash.slice(1)).get('chain')).toBe('8453');
    expect(problems).toEqual([]);
  }, 60_000);
});
