import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import {
  blockHashOf,
  insertEquity,
  insertLedger,
  insertSnapshots,
  makeSnapshot,
  randomHash,
  startReader,
  type TestReader,
  type Writer,
  writer,
} from '@vault-yield/test-kit/reader';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, openPage } from '../dashboard/browser.js';

/**
 * The pages under their Content-Security-Policy, in a real browser (Debian's chromium via
 * playwright-core): /dashboard with a vault's panels drawn (range bars, chart, ledger) and /docs
 * with Scalar's reference rendered, neither with a CSP violation (reported by the page's own
 * `securitypolicyviolation` events and in the console) nor any other console error.
 */

/** Records every CSP violation the page reports, from before its first script. */
async function watchViolations(page: Page): Promise<() => Promise<string[]>> {
  await page.addInitScript(() => {
    const w = window as unknown as { __csp: string[] };
    w.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      w.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}`),
    );
  });
  return () => page.evaluate(() => (window as unknown as { __csp: string[] }).__csp);
}

describe('CSP of /dashboard and /docs in chromium', () => {
  let db: TestDatabase;
  let w: Writer;
  let r: TestReader;
  let browser: Browser;
  const vault = makeSnapshot({ status: 'attention' });

  beforeAll(async () => {
    db = await createTestDatabase('reader-csp');
    w = writer(db.writerUrl, db.schema);
    await insertSnapshots(w, [vault]);
    await insertLedger(
      w,
      [10, 11, 12].map((b) => ({
        vault: vault.vault,
        type: 'deposit' as const,
        blockNumber: b,
        ts: 1_735_689_600_000 + b * 1000,
        txHash: randomHash(),
        blockHash: blockHashOf(b),
      })),
    );
    await insertEquity(
      w,
      vault.vault,
      [0, 1, 2, 3].map((i) => ({
        ts: 1_735_689_600_000 + i * 86_400_000,
        valueUsd: String(10_000 + i * 100),
        capitalInUsd: '10000',
        capitalOutUsd: '0',
      })),
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

  it('/dashboard renders its panels with no CSP violation and no console error', async () => {
    const { page, problems } = await openPage(browser, r.url, 1280);
    const violations = await watchViolations(page);
    const res = await page.goto(`${r.url}/dashboard`);
    expect(res?.headers()['content-security-policy']).toMatch(/default-src 'self'/);
    await page.waitForSelector('body[data-ready]');
    // A row is named by its vault id (#45): the chain and the address.
    await page.locator(`#vaults tr[data-vault$=":${vault.vault}"]`).click();
    await page.waitForSelector('[data-testid="position"]');
    await page.waitForSelector('#equity canvas');
    await page.waitForSelector('#ledger tr');
    // Styles set by the page's script (range bars, the split) took effect under the policy.
    const left = await page
      .locator('.rangebar .marker')
      .first()
      .evaluate((el) => (el as HTMLElement).style.left);
    expect(left).toMatch(/%$/);
    expect(await violations()).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('/docs renders Scalar’s reference with no CSP violation and no console error', async () => {
    const { page, problems } = await openPage(browser, r.url, 1280);
    const violations = await watchViolations(page);
    const res = await page.goto(`${r.url}/docs`);
    expect(res?.headers()['content-security-policy']).toMatch(/default-src 'self'/);
    // The reference is drawn from /openapi.json: an operation's summary shows.
    await page.getByText('Live state of one vault').first().waitFor({ timeout: 30_000 });
    await page.waitForTimeout(1_000); // late work (fonts, workers, lazy sections)
    expect(await violations()).toEqual([]);
    expect(problems.filter((p) => !/favicon/.test(p))).toEqual([]);
    await page.close();
  });
});
