import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Debian's chromium (`.ci/run` installs it when missing); CHROMIUM_PATH points elsewhere. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Screenshots land here (gitignored), kept as test artifacts. */
export const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url));

export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no browser at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  // --no-sandbox: CI runs as root, where chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

export interface WatchedPage {
  page: Page;
  /** Console errors, page errors, failed requests and requests to any other host, as text. */
  problems: string[];
  /**
   * Resolves once no request but the live stream has been in flight for `quietMs` (the page keeps
   * its server-sent events stream open, so Playwright's `networkidle` never comes).
   */
  settled(quietMs?: number): Promise<void>;
}

/** The dashboard's live stream: open for the page's whole life, never "finished". */
const isStream = (url: string) => /\/v1\/(vault\/[^/]+\/)?stream(\?|$)/.test(new URL(url).pathname + '?');

/** A page at `width` × 900 whose console errors and off-host requests are recorded. */
export async function openPage(browser: Browser, baseUrl: string, width: number): Promise<WatchedPage> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  const host = new URL(baseUrl).host;
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning')
      problems.push(`console ${m.type()}: ${m.text()} at ${m.location().url}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
  const pending = new Set<unknown>();
  let lastChange = Date.now();
  const done = (r: { url(): string }) => {
    if (pending.delete(r)) lastChange = Date.now();
  };
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (/^https?:$/.test(url.protocol) && url.host !== host) problems.push(`off-host request: ${r.url()}`);
    if (!isStream(r.url())) {
      pending.add(r);
      lastChange = Date.now();
    }
  });
  page.on('requestfinished', done);
  page.on('requestfailed', done);
  const settled = async (quietMs = 500) => {
    const deadline = Date.now() + 30_000;
    while (pending.size > 0 || Date.now() - lastChange < quietMs) {
      if (Date.now() > deadline) throw new Error(`page never settled: ${pending.size} requests in flight`);
      await new Promise((res) => setTimeout(res, 50));
    }
  };
  return { page, problems, settled };
}

export const shot = (page: Page, name: string, fullPage = true) =>
  page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage });
