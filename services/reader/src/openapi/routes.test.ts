import type { RouteConfig } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { createReader, readerConfig } from '../index.js';
import { REPEATABLE } from '../params.js';
import { routes } from './routes.js';

// Validation answers before any query runs: a reader whose database does not exist is enough.
const reader = createReader(
  readerConfig('postgres://nobody@127.0.0.1:1/none', {
    logLevel: 'silent',
    rateLimit: { ratePerSecond: 0, burst: 1, trustedProxies: { kind: 'none' } },
  }),
);
type Doc = {
  paths: Record<string, { get: { parameters?: { name: string; in: string; description?: string }[] } }>;
};
const doc = async () => (await (await reader.app.request('/openapi.json')).json()) as Doc;

const keys = (schema: unknown) => Object.keys((schema as { shape?: object } | undefined)?.shape ?? {});
const sample: Record<string, string> = {
  address: `0x${'ab'.repeat(20)}`,
  hash: `0x${'cd'.repeat(32)}`,
};
const urlOf = (path: string) => path.replace(/\{(\w+)\}/g, (_, name: string) => sample[name]!);

describe('routes declared once', () => {
  const all: RouteConfig[] = Object.values(routes);

  it('the document lists every declared route with exactly its schemas’ parameters, each described', async () => {
    const d = await doc();
    expect(Object.keys(d.paths).sort()).toEqual(all.map((r) => r.path).sort());
    for (const r of all) {
      const params = d.paths[r.path]!.get.parameters ?? [];
      const declared = [
        ...keys(r.request?.params).map((n) => `path:${n}`),
        ...keys(r.request?.query).map((n) => `query:${n}`),
      ];
      expect(
        params.map((p) => `${p.in}:${p.name}`),
        r.path,
      ).toEqual(declared);
      for (const p of params) expect(p.description, `${r.path} ${p.name}`).toMatch(/\w{4}/);
    }
  });

  it('every route refuses a parameter its schema does not declare, and a single-valued one given twice', async () => {
    for (const r of all) {
      const res = await reader.app.request(`${urlOf(r.path)}?bogus=1`);
      expect(res.status, r.path).toBe(400);
      expect(await res.json()).toEqual({
        error: { code: 'invalid_request', message: 'query."bogus": unknown query parameter' },
      });
      for (const name of keys(r.request?.query).filter((n) => !REPEATABLE.has(n))) {
        const twice = await reader.app.request(`${urlOf(r.path)}?${name}=1&${name}=2`);
        expect(await twice.json(), `${r.path} ${name}`).toEqual({
          error: { code: 'invalid_request', message: `query.${name}: given more than once` },
        });
      }
    }
  });

  it('a path parameter failing its schema is a 400 naming it', async () => {
    for (const r of all.filter((r) => keys(r.request?.params).length > 0)) {
      const res = await reader.app.request(r.path.replace(/\{\w+\}/, '0xnope'));
      expect(res.status, r.path).toBe(400);
      const body = (await res.json()) as { error: { message: string } };
      expect(body.error.message).toMatch(/^path\.(vault|hash): expected /);
    }
  });
});
