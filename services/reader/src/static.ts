import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Context } from 'hono';
import { notModified } from './http.js';

const require = createRequire(import.meta.url);

/** A file inside an installed package (never a CDN): `@scalar/api-reference`, `uplot`, … */
export function packageFile(pkg: string, file: string): string {
  // Some packages export no ./package.json: resolve the entry, then walk up to the package root.
  let dir = dirname(require.resolve(pkg));
  while (!existsSync(join(dir, 'package.json')) || !dir.endsWith(pkg)) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`package root of ${pkg} not found`);
    dir = up;
  }
  return join(dir, file);
}

export interface StaticAsset {
  /** Serves the asset with a strong ETag, Cache-Control and 304 on a matching If-None-Match. */
  serve(c: Context): Promise<Response>;
}

/**
 * An asset read (or built) once on first request and kept in memory, with its gzip made once too
 * (compressing Scalar's 4 MB bundle per request cost ≈ 300 ms of CPU): `load` gives its bytes.
 * A failed load is retried on the next request.
 */
export function staticAsset(
  contentType: string,
  load: () => Promise<Uint8Array | string>,
  maxAgeS = 300,
): StaticAsset {
  interface Variant {
    body: Uint8Array;
    etag: string;
  }
  let loaded: Promise<{ identity: Variant; gzip: Variant }> | undefined;
  const get = () => {
    loaded ??= load().then((raw) => {
      const body = typeof raw === 'string' ? new TextEncoder().encode(raw) : raw;
      const tag = createHash('sha1').update(body).digest('base64url');
      return {
        identity: { body, etag: `"${tag}"` },
        gzip: { body: gzipSync(body), etag: `"${tag}-gz"` },
      };
    });
    loaded.catch(() => {
      loaded = undefined;
    });
    return loaded;
  };
  return {
    async serve(c) {
      const variants = await get();
      const gzip = /\bgzip\b(?!;\s*q=0(\.0*)?\s*(,|$))/i.test(c.req.header('accept-encoding') ?? '');
      const { body, etag } = gzip ? variants.gzip : variants.identity;
      const headers: Record<string, string> = {
        'Cache-Control': `public, max-age=${maxAgeS}`,
        ETag: etag,
        Vary: 'Accept-Encoding',
      };
      if (notModified(c, etag)) return c.body(null, 304, headers);
      if (gzip) headers['Content-Encoding'] = 'gzip';
      return c.body(body as Uint8Array<ArrayBuffer>, 200, {
        ...headers,
        'Content-Type': contentType,
        'Content-Length': String(body.byteLength),
      });
    },
  };
}

/** A file of an installed package, served as is. */
export const packageAsset = (pkg: string, file: string, contentType: string) =>
  staticAsset(contentType, () => readFile(packageFile(pkg, file)));

/** A file on disk (a build's copy of a package's asset), served as is. */
export const fileAsset = (file: URL | string, contentType: string) =>
  staticAsset(contentType, () => readFile(file));
