import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { Context } from 'hono';
import { contentSecurityPolicy } from '../middleware/security-headers.js';
import { fileAsset, packageAsset } from '../static.js';

/** Scalar's standalone bundle in its package, and the name of its copy in the image. */
export const SCALAR_FILE = 'dist/browser/standalone.js';
export const SCALAR_COPY = 'scalar-standalone.js';

const BUNDLE = '/docs/scalar.js' as const;

/** Scalar's options: the document of this reader, "try it" against this reader, nothing remote. */
const CONFIG = {
  url: '/openapi.json',
  servers: [{ url: '/', description: 'this reader' }],
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: false,
  showDeveloperTools: 'never', // its Share / Deploy menus lead to scalar.com
  mcp: { disabled: true },
  agent: { disabled: true },
  theme: 'default',
};

/**
 * The page's inline scripts, allowed by their hashes in the page's CSP. PRE runs before the
 * bundle: the zod inside it probes `Function('')` for its JIT, which the CSP refuses (and reports
 * as a violation); jitless, it never tries.
 */
const PRE = 'globalThis.__zod_globalConfig = { jitless: true };';
const INIT = `Scalar.createApiReference('#app', ${JSON.stringify(CONFIG)})`;
const STYLE = 'body{margin:0}';
const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * /docs' Content-Security-Policy: scripts from this reader and the page's own inline script (by
 * hash); styles from this reader and inline (Scalar injects its styles at run time); fonts from
 * this reader or inlined (data:); "try it" calls this reader only.
 */
export const DOCS_CSP = contentSecurityPolicy({
  'script-src': `'self' ${sha256(PRE)} ${sha256(INIT)}`,
  'style-src': "'self' 'unsafe-inline'",
  'font-src': "'self' data:",
  'connect-src': "'self'",
});

export interface DocsPage {
  html: string;
  bundlePath: typeof BUNDLE;
  /** Scalar's standalone bundle from the installed @scalar/api-reference (no CDN). */
  bundle(c: Context): Promise<Response>;
}

/** The interactive reference at /docs: Scalar reading /openapi.json. */
export function docsPage(): DocsPage {
  // The image copies the bundle beside this module at build time (infra/docker/build.ts) and
  // ships without the package (a devDependency: ≈ 276 packages, 155 MiB); a checkout serves the
  // installed package's.
  const copied = new URL(`./${SCALAR_COPY}`, import.meta.url);
  const asset = existsSync(copied)
    ? fileAsset(copied, 'text/javascript; charset=utf-8')
    : packageAsset('@scalar/api-reference', SCALAR_FILE, 'text/javascript; charset=utf-8');
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Vault Yield Service — API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<style>${STYLE}</style></head><body>
<div id="app"></div>
<script>${PRE}</script>
<script src="${BUNDLE}"></script>
<script>${INIT}</script>
</body></html>`;
  return { html, bundlePath: BUNDLE, bundle: (c) => asset.serve(c) };
}
