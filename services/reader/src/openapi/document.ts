import type { OpenAPIHono } from '@hono/zod-openapi';
import { description } from './description.js';

type Json = Record<string, unknown>;

/**
 * The licence the document states. The repository carries no licence file: this says so (all
 * rights reserved) until one is chosen; change it here when it is.
 */
export const LICENSE = { name: 'Proprietary: all rights reserved', identifier: 'LicenseRef-Proprietary' };

/** The operations' groups, described (each operation names one in `tags`). */
export const TAGS = [
  {
    name: 'vaults',
    description:
      'One vault at a time: its snapshot, equity series and activity ledger; a transaction’s ledger rows; the vault list.',
  },
  {
    name: 'catalogue',
    description:
      'The strategy catalogue and the eligible-asset universe (assets and pairs): the latest screen’s output, returned whole.',
  },
  {
    name: 'live',
    description:
      'Server-sent events after each projection commit: new ledger rows and snapshots, resumable with Last-Event-ID.',
  },
  {
    name: 'operations',
    description:
      'Unversioned operational routes: liveness, readiness, Prometheus metrics, this document and its interactive reference.',
  },
];

/**
 * The OpenAPI 3.1 document of the reader, generated from the route declarations (routes.ts) of
 * `app`: parameters from the request schemas, bodies from the response schemas.
 */
export function buildOpenApi(app: OpenAPIHono): Json {
  app.openAPIRegistry.registerComponent('securitySchemes', 'adminToken', {
    type: 'http',
    scheme: 'bearer',
    description: 'The operators’ token (`ADMIN_TOKEN`): /metrics, and /ready’s details',
  });
  const doc = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title: 'Vault Yield Service — read API', version: '1.0.0', description, license: LICENSE },
    servers: [{ url: '/' }],
    security: [],
    tags: TAGS,
  });
  return doc as unknown as Json;
}
