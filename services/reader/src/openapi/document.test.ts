import type { RouteConfig, z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { createReader, readerConfig } from '../index.js';
import { errorBody } from '../schemas.js';
import { LICENSE, TAGS } from './document.js';
import { routes } from './routes.js';

// The document needs no database: a reader whose database does not exist serves it.
const reader = createReader(
  readerConfig('postgres://nobody@127.0.0.1:1/none', {
    logLevel: 'silent',
    rateLimit: { ratePerSecond: 0, burst: 1, trustedProxies: { kind: 'none' } },
  }),
);
type Media = { schema?: unknown; example?: unknown };
type Operation = {
  operationId?: string;
  tags?: string[];
  responses: Record<string, { description: string; content?: Record<string, Media> }>;
};
type Doc = {
  info: { license?: { name: string; identifier?: string; url?: string } };
  tags: { name: string; description?: string }[];
  paths: Record<string, { get: Operation }>;
};
const doc = async () => (await (await reader.app.request('/openapi.json')).json()) as Doc;
const operations = async () =>
  Object.entries((await doc()).paths).map(([path, item]) => ({ path, op: item.get }));
const all: RouteConfig[] = Object.values(routes);

describe('the OpenAPI document', () => {
  it('every operation has a unique camelCase operationId', async () => {
    const ids = (await operations()).map(({ op }) => op.operationId);
    expect(ids).toHaveLength(all.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][A-Za-z]+$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('every operation documents a 500 with the one error body and its example', async () => {
    for (const { path, op } of await operations()) {
      const media = op.responses['500']?.content?.['application/json'];
      expect(media?.schema, path).toEqual({ $ref: '#/components/schemas/Error' });
      expect(media?.example, path).toEqual({ error: { code: 'internal', message: 'internal error' } });
    }
  });

  it('every operation has an example on its 200, and every error answer one with its code', async () => {
    for (const { path, op } of await operations()) {
      const ok = Object.values(op.responses['200']?.content ?? {});
      expect(ok.length, path).toBe(1);
      expect(ok[0]!.example, path).toBeDefined();
      for (const [status, res] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        const example = res.content?.['application/json']?.example;
        expect(errorBody.safeParse(example).success, `${path} ${status}`).toBe(true);
      }
    }
  });

  it('each example is what the response schema accepts (the served shapes)', () => {
    for (const r of all) {
      for (const [status, res] of Object.entries(r.responses)) {
        const content = (res as { content?: Record<string, { schema: z.ZodType; example?: unknown }> })
          .content;
        for (const [type, media] of Object.entries(content ?? {})) {
          const parsed = media.schema.safeParse(media.example);
          expect(parsed.error?.issues ?? [], `${r.path} ${status} ${type}`).toEqual([]);
        }
      }
    }
  });

  it('tags are described, every operation is tagged with one of them, and the licence is stated', async () => {
    const d = await doc();
    expect(d.tags).toEqual(TAGS);
    for (const t of d.tags) expect(t.description?.length ?? 0, t.name).toBeGreaterThan(20);
    const names = new Set(d.tags.map((t) => t.name));
    for (const { path, op } of await operations()) {
      expect(op.tags?.length, path).toBe(1);
      expect(names.has(op.tags![0]!), path).toBe(true);
    }
    expect(d.info.license).toEqual(LICENSE);
    expect(d.info.license?.identifier ?? d.info.license?.url).toBeTruthy();
  });
});
