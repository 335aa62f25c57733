import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Hono } from 'hono';
import { contentSecurityPolicy } from '../middleware/security-headers.js';
import { packageAsset, staticAsset } from '../static.js';

/** /dashboard's Content-Security-Policy: its script, styles and API calls all come from this reader. */
export const DASHBOARD_CSP = contentSecurityPolicy({
  'script-src': "'self'",
  'style-src': "'self'",
  'connect-src': "'self'",
});

const here = (file: string) => fileURLToPath(new URL(`./app/${file}`, import.meta.url));

/**
 * The page's script: app/main.ts with @vault-yield/client and uPlot, bundled in memory on first
 * request (esbuild, well under a second) and kept. Nothing comes from a CDN.
 */
export async function bundleDashboard(): Promise<string> {
  const out = await build({
    entryPoints: [here('main.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return out.outputFiles[0]!.text;
}

/** The dashboard at /dashboard: static files served by the reader, reading only the public API. */
export function dashboardRoutes() {
  const page = staticAsset('text/html; charset=utf-8', () => readFile(here('index.html')));
  const css = staticAsset('text/css; charset=utf-8', () => readFile(here('app.css')));
  const script = staticAsset('text/javascript; charset=utf-8', bundleDashboard);
  const uplotCss = packageAsset('uplot', 'dist/uPlot.min.css', 'text/css; charset=utf-8');
  return new Hono()
    .get('/dashboard', (c) => page.serve(c))
    .get('/dashboard/', (c) => page.serve(c))
    .get('/dashboard/app.js', (c) => script.serve(c))
    .get('/dashboard/app.css', (c) => css.serve(c))
    .get('/dashboard/uplot.css', (c) => uplotCss.serve(c));
}
