import { createRoute, type RouteConfig, z } from '@hono/zod-openapi';
import { equityQuery, eventsQuery, txPath, vaultPath, vaultsQuery } from '../params.js';
import { queryNames, rawQuery } from '../routes/declare.js';
import * as s from '../schemas.js';

/**
 * Every route of the reader, declared once: the path and query schemas validate requests, the
 * response schemas type the client (@vault-yield/client) and, with the words here, make
 * /openapi.json. Handlers live in routes/*.ts.
 */

type Headers = Record<string, { description: string; schema: { type: 'string' | 'integer' } }>;
const header = (description: string, type: 'string' | 'integer' = 'string') => ({
  description,
  schema: { type },
});

const rateHeaders = {
  'RateLimit-Limit': header('bucket size (burst)', 'integer'),
  'RateLimit-Remaining': header('requests left in the bucket', 'integer'),
  'RateLimit-Reset': header('seconds until the bucket is full again', 'integer'),
};
const cacheHeaders = {
  'Cache-Control': header('public, max-age=<seconds>'),
  ETag: header('entity tag; send back in If-None-Match for a 304'),
};
const pageHeaders = {
  'X-Next-Cursor': header('cursor of the next page; absent on the last page'),
  Link: header('`<url>; rel="next"` of the next page; absent on the last page'),
  ...cacheHeaders,
  ...rateHeaders,
};
const screenHeaders = {
  'X-Screen-Version': header('screen run id'),
  'X-Screened-At': header('screen run time, Unix ms', 'integer'),
};

const json = <T extends z.ZodType>(schema: T, description: string, headers?: Headers) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema } },
});
const err = (description: string, headers?: Headers) => json(s.errorBody, description, headers);
const notModified = { description: 'not modified (If-None-Match matched the ETag)', headers: cacheHeaders };

const badRequest = err('invalid path or query parameter (`invalid_request`)');
const notAllowed = err('method other than GET/HEAD (`method_not_allowed`)', { Allow: header('GET, HEAD') });
const commonErrors = {
  400: badRequest,
  405: notAllowed,
  429: err('rate limited (`rate_limited`)', {
    'Retry-After': header('seconds to wait', 'integer'),
    ...rateHeaders,
  }),
  503: err('database unavailable (`unavailable`)'),
};
/** /health: no query parameters (400), GET/HEAD only (405); answered from memory, never rate limited. */
const healthErrors = { 400: badRequest, 405: notAllowed };
/** The other operational routes share the caller's rate-limit bucket (/ready queries Postgres). */
const opsErrors = { ...healthErrors, 429: commonErrors[429] };

/** A GET route: its query schema also names the parameters the raw-query check lets through. */
function get<P extends string, R extends Omit<RouteConfig, 'method' | 'middleware' | 'path'>>(
  config: R & { path: P },
) {
  return createRoute({
    ...config,
    method: 'get' as const,
    middleware: [rawQuery(queryNames(config.request?.query as z.ZodType | undefined))] as const,
  });
}

export const routes = {
  snapshot: get({
    path: '/v1/vault/{address}/snapshot',
    summary: 'Live state of one vault (one indexed row)',
    tags: ['vaults'],
    request: { params: vaultPath },
    responses: {
      200: json(s.snapshot, 'the snapshot', { ...cacheHeaders, ...rateHeaders }),
      304: notModified,
      404: err('unknown vault (`not_found`)'),
      ...commonErrors,
    },
  }),
  equity: get({
    path: '/v1/vault/{address}/equity',
    summary:
      'Equity series, oldest first, downsampled on the server keeping the window’s first and last points',
    tags: ['vaults'],
    request: { params: vaultPath, query: equityQuery },
    responses: {
      200: json(z.array(s.equityPoint), 'the series', { ...cacheHeaders, ...rateHeaders }),
      304: notModified,
      404: err('unknown vault (`not_found`)'),
      ...commonErrors,
    },
  }),
  events: get({
    path: '/v1/vault/{address}/events',
    summary: 'Activity ledger, newest first, cursor-paginated',
    tags: ['vaults'],
    request: { params: vaultPath, query: eventsQuery },
    responses: {
      200: json(z.array(s.ledgerRow), 'one page of rows', pageHeaders),
      304: notModified,
      404: err('unknown vault (`not_found`)'),
      ...commonErrors,
    },
  }),
  tx: get({
    path: '/v1/tx/{hash}',
    summary: 'Ledger rows of one transaction, across vaults, newest first',
    tags: ['vaults'],
    request: { params: txPath },
    responses: {
      200: json(z.array(s.ledgerRow).min(1), 'the rows', { ...cacheHeaders, ...rateHeaders }),
      304: notModified,
      404: err('no activity recorded for this transaction (`not_found`)'),
      ...commonErrors,
    },
  }),
  vaults: get({
    path: '/v1/vaults',
    summary: 'Vaults by ascending address, optionally of one owner, cursor-paginated',
    tags: ['vaults'],
    request: { query: vaultsQuery },
    responses: {
      200: json(z.array(s.vaultSummary), 'one page of vaults', pageHeaders),
      304: notModified,
      ...commonErrors,
    },
  }),
  strategies: get({
    path: '/v1/strategies',
    summary: 'Strategy catalogue (whole, at most 1000)',
    tags: ['catalogue'],
    responses: {
      200: json(z.array(s.strategyEntry).max(1000), 'the catalogue', { ...cacheHeaders, ...rateHeaders }),
      304: notModified,
      ...commonErrors,
    },
  }),
  universe: get({
    path: '/v1/universe',
    summary: 'Eligible assets from the latest screen (whole, at most 1000)',
    tags: ['catalogue'],
    responses: {
      200: json(z.array(s.universeAsset).max(1000), 'the assets', {
        ...screenHeaders,
        ...cacheHeaders,
        ...rateHeaders,
      }),
      304: notModified,
      ...commonErrors,
    },
  }),
  pairs: get({
    path: '/v1/universe/pairs',
    summary: 'Eligible pairs from the latest screen (whole, at most 1000)',
    tags: ['catalogue'],
    responses: {
      200: json(z.array(s.universePair).max(1000), 'the pairs', {
        ...screenHeaders,
        ...cacheHeaders,
        ...rateHeaders,
      }),
      304: notModified,
      ...commonErrors,
    },
  }),
  health: get({
    path: '/health',
    summary: 'Liveness: the process answers',
    tags: ['operations'],
    responses: { 200: json(s.health, 'alive'), ...healthErrors },
  }),
  ready: get({
    path: '/ready',
    summary: 'Readiness: Postgres answers and the projection schema is migrated',
    tags: ['operations'],
    responses: {
      200: json(s.ready, 'ready'),
      503: err('not ready (`unavailable`): database unreachable, schema behind, or shutting down'),
      ...opsErrors,
    },
  }),
  metrics: get({
    path: '/metrics',
    summary: 'Prometheus metrics',
    tags: ['operations'],
    responses: {
      200: { description: 'text exposition format', content: { 'text/plain': { schema: z.string() } } },
      ...opsErrors,
    },
  }),
  openapi: get({
    path: '/openapi.json',
    summary: 'This document',
    tags: ['operations'],
    responses: {
      200: json(z.record(z.string(), z.unknown()), 'OpenAPI 3.1'),
      ...opsErrors,
    },
  }),
  docs: get({
    path: '/docs',
    summary: 'Interactive reference of this document (Scalar, served by the reader)',
    tags: ['operations'],
    responses: {
      200: { description: 'HTML', content: { 'text/html': { schema: z.string() } } },
      ...opsErrors,
    },
  }),
};
