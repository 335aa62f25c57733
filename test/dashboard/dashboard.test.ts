import {
  createClient,
  type EventsQuery,
  type LedgerRow,
  nextCursor,
  ok,
  type Snapshot,
  type VaultSummary,
} from '@vault-yield/client';
import { testTokenAbi, vaultAbi } from '@vault-yield/contracts';
import { createDriverClients, minedReceipt, send } from '@vault-yield/devstack/chain';
import { parseStreamCursor } from '@vault-yield/reader';
import { price, short, usd, usdSigned } from '@vault-yield/reader/dashboard/dom';
import { startBoth } from '@vault-yield/test-kit';
import type { Browser, Page } from 'playwright-core';
import type { Address, Hash } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/run.js';
import { openStream, until } from '../stream/support.js';
import { launch, openPage, shot } from './browser.js';
import { type DevStack, startDevStack } from './dev-stack.js';
import { expectHoldLine, expectLp, withHold } from './lp-expect.js';

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
    // One chain: this file checks the dashboard's figures against the API by bare address (the
    // dashboard over two chains, where an address names two vaults: test/dashboard/chains.test.ts;
    // `npm start` on two chains: test/dev/dev.test.ts).
    await startBoth(startDevStack({ oneChain: true }), launch(), (d, b) => {
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
      const row = page.locator(`#vaults tr[data-vault$=":${v.vault}"]`);
      const cells = await row.locator('td').allTextContents();
      expect(cells).toEqual(
        expect.arrayContaining([short(v.vault), v.strategy, v.status, usd(v.valueUsd), usdSigned(v.netUsd)]),
      );
    }

    // Each vault in turn: the view built from its snapshot, its chart, its ledger.
    for (const v of vaults) {
      await page.locator(`#vaults tr[data-vault$=":${v.vault}"]`).click();
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
      // The LP figures (#46): the demo is folded at this fold version, so every vault has them and
      // every point its holding value; the page shows them as served.
      expect(snap.lp).toBeTruthy();
      expect(withHold(points).length).toBe(points.length);
      await expectLp(page, snap);
      await expectHoldLine(page, points);
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
    await page.locator(`#vaults tr[data-vault$=":${vault}"]`).click();
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
    ).toEqual(mine.map((v) => v.id));
    await page.locator('#owner-clear').click();
    await page.waitForFunction(
      (n) => document.querySelectorAll('#vaults tbody tr').length === n,
      vaults.length,
    );

    await page.locator(`#vaults tr[data-vault$=":${vaults[0]!.vault}"]`).click();
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
    await expectLp(page, snap);
    for (const panel of ['list', 'vault', 'equity', 'positions', 'lp', 'fees', 'ledger', 'tx']) {
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

  // Live on the chain (#28). These send transactions, so they come last: the tests above compare
  // a demo that no longer moves with what the API serves.

  /** A demo vault that takes deposits, whose owner still holds its token0, and deposits into it. */
  async function depositor() {
    const c = await createDriverClients(dev.rpcUrl);
    for (const v of vaults) {
      const vault = v.vault as Address;
      const read = <T>(functionName: 'owner' | 'token0' | 'exitRequested' | 'suspended') =>
        c.publicClient.readContract({ address: vault, abi: vaultAbi, functionName }) as Promise<T>;
      const [owner, token, exiting, suspended] = await Promise.all([
        read<Address>('owner'),
        read<Address>('token0'),
        read<boolean>('exitRequested'),
        read<boolean>('suspended'),
      ]);
      if (exiting || suspended) continue;
      const held = await c.publicClient.readContract({
        address: token,
        abi: testTokenAbi,
        functionName: 'balanceOf',
        args: [owner],
      });
      if (held < 1000n) continue;
      return {
        vault: v.vault,
        /** Sends a deposit of `parts` thousandths of what the owner holds now; its hash. */
        deposit: (parts: bigint) =>
          send(c, owner.toLowerCase() as Address, vault, vaultAbi, 'deposit', [
            token,
            (held * parts) / 100_000n,
          ]),
        /** The deposit's receipt, and when it was seen mined (wall clock). */
        mined: async (hash: Hash) => {
          const r = await minedReceipt(c.publicClient, hash);
          expect(r.status).toBe('success');
          return { receipt: r, at: Date.now() };
        },
      };
    }
    throw new Error('no active demo vault whose owner holds its token0');
  }

  it('deposits sent on the chain arrive on an open stream in order, after the block, with no request', async () => {
    const d = await depositor();
    const s = await openStream(`${dev.url}/v1/vault/${d.vault}/stream`);
    try {
      expect(s.status).toBe(200);
      expect((await s.waitFor(1))[0]?.event).toBe('snapshot');
      const arrived = new Map<string, number>();
      const watch = setInterval(() => {
        for (const e of s.events)
          if (e.event === 'ledger') {
            const row = JSON.parse(e.data) as LedgerRow;
            if (!arrived.has(row.txHash)) arrived.set(row.txHash, Date.now());
          }
      }, 2);
      // Three deposits (a block every 2 s: some may share one), each waited for before the next is sent.
      const sent: { hash: Hash; mined: number; block: bigint }[] = [];
      try {
        for (const parts of [1n, 2n, 3n]) {
          const hash = await d.deposit(parts);
          const m = await d.mined(hash);
          sent.push({ hash, mined: m.at, block: m.receipt.blockNumber });
        }
        await until(async () => (sent.every((x) => arrived.has(x.hash)) ? true : undefined), 30_000, 20);
      } finally {
        clearInterval(watch);
      }
      const deposits = s.events
        .filter((e) => e.event === 'ledger')
        .map((e) => JSON.parse(e.data) as LedgerRow)
        .filter((r) => sent.some((x) => x.hash === r.txHash));
      expect(deposits.map((r) => [r.type, r.txHash])).toEqual(sent.map((x) => ['deposit', x.hash]));
      expect(deposits.map((r) => BigInt(r.blockNumber))).toEqual(sent.map((x) => x.block));
      // Each event's id is its cursor: strictly increasing.
      const ids = s.events.filter((e) => e.event === 'ledger').map((e) => parseStreamCursor(e.id!)!);
      for (let i = 1; i < ids.length; i++)
        expect(
          ids[i]!.seq > ids[i - 1]!.seq || (ids[i]!.seq === ids[i - 1]!.seq && ids[i]!.pos > ids[i - 1]!.pos),
        ).toBe(true);
      // The figure (speed is the benches' to judge): from the receipt seen to the event.
      console.log(
        `[stream] block → event on an open stream: ${sent.map((x) => `${arrived.get(x.hash)! - x.mined} ms`).join(', ')} (receipt polled every 10 ms)`,
      );
    } finally {
      s.close();
    }
  }, 90_000);

  it('Chromium: a deposit sent on the chain appears on top of the ledger with the new value, no click', async () => {
    const d = await depositor();
    const { page, problems } = await openPage(browser, dev.url, 1280);
    await page.goto(`${dev.url}/dashboard#vault=${d.vault}`);
    await page.waitForSelector('body[data-ready=true]');
    await page.waitForSelector('#live[data-state=live]', { timeout: 10_000 });
    const hash = await d.deposit(4n);
    const { at: mined } = await d.mined(hash);
    await page.waitForFunction(
      (h) => document.querySelector('#ledger tbody tr button')?.getAttribute('title') === h,
      hash,
      { timeout: 30_000, polling: 10 },
    );
    const shown = Date.now() - mined;
    expect(await page.locator('#ledger tbody tr').first().getAttribute('data-type')).toBe('deposit');
    // The value the page shows is the snapshot the API serves after the deposit.
    const snap = await ok(await api.v1.vault[':address'].snapshot.$get({ param: { address: d.vault } }));
    await page.waitForFunction(
      (v) => document.querySelector('[data-testid=value] strong')?.textContent?.trim() === v,
      usd(snap.valueUsd),
      { timeout: 5_000 },
    );
    expect(await page.locator('#live').textContent()).toBe('live');
    // The chart extended from the stream's snapshot keeps the holding line to its last point.
    const equity = page.locator('#equity');
    expect(await equity.getAttribute('data-hold')).toBe(await equity.getAttribute('data-points'));
    console.log(`[dashboard] deposit on the page ${shown} ms after its receipt was seen`);
    await shot(page, 'live-deposit-1280');
    expect(problems).toEqual([]);
    await page.close();
  }, 90_000);

  it('rebuild on the running stack: the projector follows the switch, a new deposit shows through the views', async () => {
    const rb = await runCli(
      ['rebuild', '--schema', 'vault_yield_rb', '--group', 'dev-rb'],
      dev.cliEnv,
      180_000,
    );
    expect(rb.code, rb.stderr).toBe(0);
    expect(rb.stdout).toMatch(/switched vault_yield_api → vault_yield_rb \(was vault_yield\)/);
    const d = await depositor();
    const hash = await d.deposit(5n);
    await d.mined(hash);
    // No manual step: the demo's projector moved to vault_yield_rb by itself.
    const top = await until(async () => {
      const rows = await ok(
        await api.v1.vault[':address'].events.$get({ param: { address: d.vault }, query: { limit: 1 } }),
      );
      return rows[0]?.txHash === hash ? rows[0] : undefined;
    }, 30_000);
    expect(top.type).toBe('deposit');
    const status = await runCli(['status', '--json'], dev.cliEnv);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      viewsSchema: 'vault_yield_api',
      liveSchema: 'vault_yield_rb',
    });
  }, 240_000);
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
