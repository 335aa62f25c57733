import type { Context } from 'hono';
import { packageAsset } from '../static.js';

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

export interface DocsPage {
  html: string;
  bundlePath: typeof BUNDLE;
  /** Scalar's standalone bundle from the installed @scalar/api-reference (no CDN). */
  bundle(c: Context): Promise<Response>;
}

/** The interactive reference at /docs: Scalar reading /openapi.json. */
export function docsPage(): DocsPage {
  const asset = packageAsset(
    '@scalar/api-reference',
    'dist/browser/standalone.js',
    'text/javascript; charset=utf-8',
  );
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Vault Yield Service — API reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<style>body{margin:0}</style></head><body>
<div id="app"></div>
<script src="${BUNDLE}"></script>
<script>Scalar.createApiReference('#app', ${JSON.stringify(CONFIG)})</script>
</body></html>`;
  return { html, bundlePath: BUNDLE, bundle: (c) => asset.serve(c) };
}
