import type { OpenAPIHono } from '@hono/zod-openapi';
import { description } from './description.js';

type Json = Record<string, unknown>;

/**
 * The OpenAPI 3.1 document of the reader, generated from the route declarations (routes.ts) of
 * `app`: parameters from the request schemas, bodies from the response schemas.
 */
export function buildOpenApi(app: OpenAPIHono): Json {
  const doc = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title: 'Vault Yield Service — read API', version: '1.0.0', description },
    servers: [{ url: '/' }],
    security: [],
    tags: [{ name: 'vaults' }, { name: 'catalogue' }, { name: 'operations' }],
  });
  return doc as unknown as Json;
}
