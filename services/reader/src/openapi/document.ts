import { activityTypes } from '@vault-yield/domain';
import { z } from 'zod';
import { LIMITS } from '../params.js';
import {
  equityPoint,
  errorBody,
  health,
  ledgerRow,
  ready,
  snapshot,
  strategyEntry,
  universeAsset,
  universePair,
  vaultSummary,
} from '../schemas.js';
import { description } from './description.js';

type Json = Record<string, unknown>;

/** Named components: generated from the zod schemas, referenced as #/components/schemas/<id>. */
function componentSchemas(): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  const named: [z.ZodType, string][] = [
    [snapshot, 'Snapshot'],
    [equityPoint, 'EquityPoint'],
    [ledgerRow, 'LedgerRow'],
    [strategyEntry, 'Strategy'],
    [universeAsset, 'UniverseAsset'],
    [universePair, 'UniversePair'],
    [vaultSummary, 'VaultSummary'],
    [errorBody, 'Error'],
    [health, 'Health'],
    [ready, 'Ready'],
  ];
  for (const [schema, id] of named) registry.add(schema, { id });
  // `input`: ledger payload addresses are transforms (lowercasing) whose input side is representable.
  const { schemas } = z.toJSONSchema(registry, {
    io: 'input',
    target: 'draft-2020-12',
    uri: (id) => `#/components/schemas/${id}`,
    unrepresentable: 'any',
  });
  const out: Record<string, Json> = {};
  for (const [id, s] of Object.entries(schemas)) {
    const { $schema: _s, $id: _i, ...rest } = s as Json;
    out[id] = rest;
  }
  return out;
}

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const json = (schema: Json, description: string, headers?: Json) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema } },
});
const err = (description: string, headers?: Json) => json(ref('Error'), description, headers);
const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });

const rateHeaders = {
  'RateLimit-Limit': header('bucket size (burst)', { type: 'integer' }),
  'RateLimit-Remaining': header('requests left in the bucket', { type: 'integer' }),
  'RateLimit-Reset': header('seconds until the bucket is full again', { type: 'integer' }),
};
const pageHeaders = {
  'X-Next-Cursor': header('cursor of the next page; absent on the last page'),
  Link: header('`<url>; rel="next"` of the next page; absent on the last page'),
  ...rateHeaders,
};

const commonErrors = {
  '400': err('invalid path or query parameter (`invalid_request`)'),
  '405': err('method other than GET/HEAD (`method_not_allowed`)', { Allow: header('GET, HEAD') }),
  '429': err('rate limited (`rate_limited`)', {
    'Retry-After': header('seconds to wait', { type: 'integer' }),
    ...rateHeaders,
  }),
  '503': err('database unavailable (`unavailable`)'),
};

/** Operational routes: no query parameters (400), GET/HEAD only (405); not rate limited. */
const opsErrors = { '400': commonErrors['400'], '405': commonErrors['405'] };

const addressIn = {
  name: 'address',
  in: 'path',
  required: true,
  description: 'vault address: 0x + 40 hex digits, any case',
  schema: { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' },
};
const timeIn = (name: string, bound: string) => ({
  name,
  in: 'query',
  required: false,
  description: `${bound}: Unix milliseconds or ISO-8601 date / date-time with offset`,
  schema: {
    anyOf: [
      { type: 'string', pattern: '^[0-9]{1,16}$' },
      { type: 'string', format: 'date' },
      { type: 'string', format: 'date-time' },
    ],
  },
});
const intIn = (name: string, text: string, max: number, dflt: number) => ({
  name,
  in: 'query',
  required: false,
  description: `${text} (default ${dflt}, at most ${max}; out of range is a 400, not clamped)`,
  schema: { type: 'integer', minimum: 1, maximum: max, default: dflt },
});
const cursorIn = {
  name: 'cursor',
  in: 'query',
  required: false,
  description: 'opaque cursor from the previous page’s X-Next-Cursor header',
  schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,400}$' },
};
const cacheHeaders = {
  'Cache-Control': header('public, max-age=<seconds>'),
  ETag: header('entity tag; send back in If-None-Match for a 304'),
};

const op = (summary: string, tags: string[], parameters: Json[], responses: Json, extra: Json = {}) => ({
  get: { summary, tags, parameters, responses, ...extra },
});

/** The OpenAPI 3.1 document of the reader, built once at start-up. */
export function buildOpenApi(): Json {
  return {
    openapi: '3.1.0',
    info: { title: 'Vault Yield Service — read API', version: '1.0.0', description },
    servers: [{ url: '/' }],
    security: [],
    tags: [{ name: 'vaults' }, { name: 'catalogue' }, { name: 'operations' }],
    paths: {
      '/v1/vault/{address}/snapshot': op(
        'Live state of one vault (one indexed row)',
        ['vaults'],
        [addressIn, { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } }],
        {
          '200': json(ref('Snapshot'), 'the snapshot', { ...cacheHeaders, ...rateHeaders }),
          '304': { description: 'not modified (If-None-Match matched the ETag)', headers: cacheHeaders },
          '404': err('unknown vault (`not_found`)'),
          ...commonErrors,
        },
      ),
      '/v1/vault/{address}/equity': op(
        'Equity series, downsampled on the server, oldest first',
        ['vaults'],
        [
          addressIn,
          timeIn('from', 'window start, inclusive'),
          timeIn('to', 'window end, exclusive'),
          intIn('points', 'most points returned', LIMITS.equity.maxPoints, LIMITS.equity.defaultPoints),
        ],
        {
          '200': json({ type: 'array', items: ref('EquityPoint') }, 'the series', rateHeaders),
          '404': err('unknown vault (`not_found`)'),
          ...commonErrors,
        },
      ),
      '/v1/vault/{address}/events': op(
        'Activity ledger, newest first, cursor-paginated',
        ['vaults'],
        [
          addressIn,
          {
            name: 'type',
            in: 'query',
            required: false,
            description: 'event types: comma-separated and/or repeated; any of them matches',
            style: 'form',
            explode: true,
            schema: { type: 'array', items: { type: 'string', enum: activityTypes } },
          },
          timeIn('since', 'lower bound on ts, inclusive'),
          timeIn('until', 'upper bound on ts, exclusive'),
          intIn('limit', 'rows per page', LIMITS.events.max, LIMITS.events.default),
          cursorIn,
        ],
        {
          '200': json({ type: 'array', items: ref('LedgerRow') }, 'one page of rows', pageHeaders),
          '404': err('unknown vault (`not_found`)'),
          ...commonErrors,
        },
      ),
      '/v1/tx/{hash}': op(
        'Ledger rows of one transaction, across vaults, newest first',
        ['vaults'],
        [
          {
            name: 'hash',
            in: 'path',
            required: true,
            description: 'transaction hash: 0x + 64 hex digits, any case',
            schema: { type: 'string', pattern: '^0x[0-9a-fA-F]{64}$' },
          },
        ],
        {
          '200': json({ type: 'array', items: ref('LedgerRow'), minItems: 1 }, 'the rows', rateHeaders),
          '404': err('no activity recorded for this transaction (`not_found`)'),
          ...commonErrors,
        },
      ),
      '/v1/vaults': op(
        'Vaults by ascending address, optionally of one owner, cursor-paginated',
        ['vaults'],
        [
          {
            name: 'owner',
            in: 'query',
            required: false,
            description: 'owner address, any case',
            schema: { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$' },
          },
          intIn('limit', 'vaults per page', LIMITS.vaults.max, LIMITS.vaults.default),
          cursorIn,
        ],
        {
          '200': json({ type: 'array', items: ref('VaultSummary') }, 'one page of vaults', pageHeaders),
          ...commonErrors,
        },
      ),
      '/v1/strategies': op('Strategy catalogue (whole, at most 1000)', ['catalogue'], [], {
        '200': json({ type: 'array', items: ref('Strategy'), maxItems: 1000 }, 'the catalogue', {
          ...cacheHeaders,
          ...rateHeaders,
        }),
        '304': { description: 'not modified', headers: cacheHeaders },
        ...commonErrors,
      }),
      '/v1/universe': op('Eligible assets from the latest screen (whole, at most 1000)', ['catalogue'], [], {
        '200': json({ type: 'array', items: ref('UniverseAsset'), maxItems: 1000 }, 'the assets', {
          'X-Screen-Version': header('screen run id'),
          'X-Screened-At': header('screen run time, Unix ms', { type: 'integer' }),
          ...cacheHeaders,
          ...rateHeaders,
        }),
        '304': { description: 'not modified', headers: cacheHeaders },
        ...commonErrors,
      }),
      '/v1/universe/pairs': op(
        'Eligible pairs from the latest screen (whole, at most 1000)',
        ['catalogue'],
        [],
        {
          '200': json({ type: 'array', items: ref('UniversePair'), maxItems: 1000 }, 'the pairs', {
            'X-Screen-Version': header('screen run id'),
            'X-Screened-At': header('screen run time, Unix ms', { type: 'integer' }),
            ...cacheHeaders,
            ...rateHeaders,
          }),
          '304': { description: 'not modified', headers: cacheHeaders },
          ...commonErrors,
        },
      ),
      '/health': op('Liveness: the process answers', ['operations'], [], {
        '200': json(ref('Health'), 'alive'),
        ...opsErrors,
      }),
      '/ready': op('Readiness: Postgres answers and the projection schema is migrated', ['operations'], [], {
        '200': json(ref('Ready'), 'ready'),
        '503': err('not ready (`unavailable`): database unreachable, schema behind, or shutting down'),
        ...opsErrors,
      }),
      '/metrics': op('Prometheus metrics', ['operations'], [], {
        '200': {
          description: 'text exposition format',
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
        ...opsErrors,
      }),
      '/openapi.json': op('This document', ['operations'], [], {
        '200': {
          description: 'OpenAPI 3.1',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
        ...opsErrors,
      }),
      '/docs': op('Reference page rendering this document', ['operations'], [], {
        '200': { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } },
        ...opsErrors,
      }),
    },
    components: { schemas: componentSchemas() },
  };
}
