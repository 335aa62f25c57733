import { createRoute, type RouteConfig, z } from '@hono/zod-openapi';
import {
  equityQuery,
  eventsQuery,
  STREAM_MAX_VAULTS,
  streamQuery,
  txPath,
  txQuery,
  vaultPath,
  vaultsQuery,
} from '../params.js';
import { queryNames, rawQuery } from '../routes/declare.js';
import * as s from '../schemas.js';
import * as ex from './examples.js';

/**
 * Every route of the reader, declared once: the path and query schemas validate requests, the
 * response schemas (whose types must equal the client's own: client-types.test.ts) and, with the
 * words and examples here, make /openapi.json. Handlers live in routes/*.ts.
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

/** A JSON answer with its example (every operation documents one: examples.ts). */
const json = <T extends z.ZodType>(schema: T, description: string, example: unknown, headers?: Headers) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema, example } },
});
const err = (description: string, code: s.ErrorCode, message: string, headers?: Headers) =>
  json(s.errorBody, description, ex.errorExample(code, message), headers);
const notModified = { description: 'not modified (If-None-Match matched the ETag)', headers: cacheHeaders };

const badRequest = err(
  'invalid path or query parameter (`invalid_request`)',
  'invalid_request',
  'query.limit: expected an integer from 1 to 500',
);
const notAllowed = err(
  'method other than GET/HEAD (`method_not_allowed`)',
  'method_not_allowed',
  'method POST not allowed; use GET',
  {
    Allow: header('GET, HEAD'),
  },
);
const notFound = (description: string, message: string) => err(description, 'not_found', message);
/** A server bug (client input never causes one); the body never carries a stack trace. */
const internal = err('internal error (`internal`): a server bug', 'internal', 'internal error');
const commonErrors = {
  400: badRequest,
  405: notAllowed,
  429: err('rate limited (`rate_limited`)', 'rate_limited', 'rate limit exceeded: retry in 1s', {
    'Retry-After': header('seconds to wait', 'integer'),
    ...rateHeaders,
  }),
  500: internal,
  503: err('database unavailable (`unavailable`)', 'unavailable', 'database unavailable; retry later', {
    'Retry-After': header('seconds to wait', 'integer'),
  }),
};
/** /health: no query parameters (400), GET/HEAD only (405); answered from memory, never rate limited. */
const healthErrors = { 400: badRequest, 405: notAllowed, 500: internal };
/** The other operational routes share the caller's rate-limit bucket (/ready queries Postgres). */
const opsErrors = { ...healthErrors, 429: commonErrors[429] };
const vaultNotFound = notFound(
  'unknown vault (`not_found`)',
  'vault eip155:8453:0x5fbdb2315678afecb367f032d93f642f64180aa3 not found',
);
/** A bare address that is a vault on several chains. */
const ambiguousVault = json(
  s.errorBody,
  'the bare address is a vault on several chains (`ambiguous_vault`): `error.candidates` lists their ids, by ascending chain id; ask again with one of them',
  ex.ambiguousExample,
);
/** The answers of a route naming one vault (an id, or a bare address). */
const vaultErrors = { 404: vaultNotFound, 409: ambiguousVault };

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

/** What a live stream sends, and how it resumes: the 200 of both stream routes. */
const STREAM_TEXT = `Server-sent events (\`text/event-stream\`), one after each projection commit that touched a followed vault. Events:

- \`ledger\`: one new row of the vault's ledger; \`data\` is a **LedgerRow** (as GET events serves it). A commit's rows come oldest first, before the vault's snapshot.
- \`snapshot\`: \`data\` is \`{"id": string, "chainId": number, "vault": string, "etag": string, "snapshot": Snapshot}\` (\`id\` the vault's id \`eip155:{chainId}:{vault}\`): the vault's snapshot once the commit is visible, with the ETag GET snapshot gives it (send it as If-None-Match there for a 304). A stream of named vaults opens with one for each.
- \`retract\`: \`data\` is \`{"id": string, "chainId": number, "vault": string, "ids": string[]}\` (\`id\` the vault's id): a chain reorganisation orphaned the blocks of these rows of the vault (LedgerRow ids, ascending: every row the reorganisation removed, so also rows of types this stream does not send); they are gone from GET events, and the vault's figures were re-folded from the fork (read its equity again). The canonical chain's rows, if any, follow as \`ledger\` events. Sent before the commit's new rows and snapshot. A vault **born** in the orphaned blocks that the canonical chain does not create again is gone: the retract lists every row it had and **no snapshot follows** (nor ever will, unless the chain creates it again: then it starts over from its creation); GET on the vault answers 404 and it leaves GET vaults.
- \`reset\`: \`data\` is \`{"reason": string, "cursor": string}\`: the stream could not resume from \`Last-Event-ID\` (a cursor older than the commits kept, or from another projection schema after a rebuild); it goes on from now: read the resources again.

Every event has an \`id\`: an opaque cursor (a commit number and a position in it, base64url). A client that reconnects with \`Last-Event-ID\` set to the last id it received gets exactly the events after it, no gap and no duplicate. A comment line (\`: keep-alive\`) is sent on a stream idle for ~15 s (\`STREAM_HEARTBEAT_MS\`). \`retry: 2000\` asks EventSource to reconnect after 2 s.

Streams are capped per client (keyed as the rate limit) and per reader process: beyond either the answer is 503 \`unavailable\` with Retry-After (fall back to polling with If-None-Match). Opening a stream, and each read of Postgres it makes after, takes one of the client's concurrent request slots (\`CLIENT_CONCURRENCY\`): a client whose slots and queue are all taken gets 429 \`rate_limited\`, and its open streams wait for a slot to read. A client that stops reading holds its stream only until a write has waited ~30 s (\`STREAM_WRITE_TIMEOUT_MS\`): the connection is then closed (reconnect with \`Last-Event-ID\`). A stream whose reads fail (the database unavailable) stays open and tries again, saying nothing of the error.

\`HEAD\` answers 200 with the stream's headers (\`text/event-stream\`) and no body, without opening a stream or counting against the caps; it checks the \`Last-Event-ID\` and the parameters, not whether the vault exists.`;
const STREAM_EXAMPLE = [
  'retry: 2000',
  '',
  'event: snapshot',
  `data: {"id":"${ex.streamVaultId}","chainId":${ex.streamChain},"vault":"${ex.streamVault}","etag":"\\"5d41402abc4b2a76b9719d911017c592\\"","snapshot":{"id":"${ex.streamVaultId}","chainId":${ex.streamChain},"vault":"${ex.streamVault}","status":"earning","valueUsd":10412.5}}`,
  'id: YzE6NDI',
  '',
  'event: ledger',
  `data: {"id":"${ex.streamChain}:0x8a5f…:0x3f1e…:3:${ex.streamVault}","vault":"${ex.streamVault}","chainId":${ex.streamChain},"type":"deposit","blockNumber":1843}`,
  'id: YzE6NDM6MQ',
  '',
  ': keep-alive',
  '',
].join('\n');
const streamOk = {
  description: STREAM_TEXT,
  headers: { 'Cache-Control': header('no-store') },
  content: { 'text/event-stream': { schema: z.string(), example: STREAM_EXAMPLE } },
};
const streamErrors = {
  ...commonErrors,
  400: err(
    'invalid path or query parameter, or a `Last-Event-ID` the reader did not issue (`invalid_request`)',
    'invalid_request',
    'header.last-event-id: invalid stream cursor: send back an event id unchanged',
  ),
  503: err(
    'too many live streams (of this client, or on this reader), or the database unavailable (`unavailable`)',
    'unavailable',
    'too many live streams open by this client (at most 8); retry in 5s or poll',
    { 'Retry-After': header('seconds to wait', 'integer') },
  ),
};

export const routes = {
  snapshot: get({
    path: '/v1/vault/{vault}/snapshot',
    operationId: 'getVaultSnapshot',
    summary: 'Live state of one vault (one indexed row)',
    tags: ['vaults'],
    request: { params: vaultPath },
    responses: {
      200: json(s.snapshot, 'the snapshot', ex.snapshotExample, { ...cacheHeaders, ...rateHeaders }),
      304: notModified,
      ...vaultErrors,
      ...commonErrors,
    },
  }),
  equity: get({
    path: '/v1/vault/{vault}/equity',
    operationId: 'getVaultEquity',
    summary:
      'Equity series, oldest first, downsampled on the server keeping the window’s first and last points',
    tags: ['vaults'],
    request: { params: vaultPath, query: equityQuery },
    responses: {
      200: json(z.array(s.equityPoint), 'the series', ex.equityExample, { ...cacheHeaders, ...rateHeaders }),
      304: notModified,
      ...vaultErrors,
      ...commonErrors,
    },
  }),
  events: get({
    path: '/v1/vault/{vault}/events',
    operationId: 'listVaultEvents',
    summary: 'Activity ledger, newest first, cursor-paginated',
    tags: ['vaults'],
    request: { params: vaultPath, query: eventsQuery },
    responses: {
      200: json(z.array(s.ledgerRow), 'one page of rows', ex.ledgerExample, pageHeaders),
      304: notModified,
      ...vaultErrors,
      ...commonErrors,
    },
  }),
  vaultStream: get({
    path: '/v1/vault/{vault}/stream',
    operationId: 'streamVault',
    summary: 'Live: the vault’s new ledger rows and snapshot after each commit (server-sent events)',
    description:
      'The vault is named by its id `eip155:{chainId}:0x…` or a bare address (409 `ambiguous_vault` when the address is a vault on several chains; a HEAD does not check). Opens with the vault’s current snapshot (unless resuming with `Last-Event-ID`), then sends what each projection commit brings. See the 200 answer for the events.',
    tags: ['live'],
    request: { params: vaultPath },
    responses: { 200: streamOk, ...vaultErrors, ...streamErrors },
  }),
  stream: get({
    path: '/v1/stream',
    operationId: 'streamVaults',
    summary: 'Live: several vaults’ (or every vault’s) new ledger rows and snapshots (server-sent events)',
    description: `\`vault\` names up to ${STREAM_MAX_VAULTS} vaults (the stream opens with their snapshots), each by its id \`eip155:{chainId}:0x…\` or by a bare address: a bare address follows the vaults at that address on **every** chain (those created later too; a stream never answers 409); without it the stream follows every vault of every chain (and opens with none). See the 200 answer for the events.`,
    tags: ['live'],
    request: { query: streamQuery },
    responses: { 200: streamOk, ...streamErrors },
  }),
  tx: get({
    path: '/v1/tx/{hash}',
    operationId: 'getTransactionEvents',
    summary: 'Ledger rows of one transaction, across vaults and chains, newest first, cursor-paginated',
    description:
      'A transaction hash may repeat across chains: the rows of every chain are served, each with its `chainId`, in one order (block, transaction index, log index and block hash descending, then chain id descending, then vault ascending) that the cursor follows. At most `limit` rows a page (default 100, at most 500); the next page’s cursor is in X-Next-Cursor and Link, as on the events endpoint. The first page holds at least one row (else 404); a later page may be empty if rows were reverted meanwhile.',
    tags: ['vaults'],
    request: { params: txPath, query: txQuery },
    responses: {
      200: json(z.array(s.ledgerRow), 'one page of rows', ex.ledgerExample, pageHeaders),
      304: notModified,
      404: notFound(
        'no activity recorded for this transaction (`not_found`)',
        'no activity recorded for transaction 0x3f1e4a0c1ab0a5d4ad0f6a59f3cf2d9b7f8f2f1c6f1e2d3c4b5a69788796a5b4',
      ),
      ...commonErrors,
    },
  }),
  vaults: get({
    path: '/v1/vaults',
    operationId: 'listVaults',
    summary:
      'Vaults by ascending address then chain, optionally of one owner and / or one chain, cursor-paginated',
    description:
      'Each entry carries the vault’s `id` (`eip155:{chainId}:{address}`) and `chainId`: the same address may be a vault on several chains, each its own entry. `chainId` keeps the vaults of one chain.',
    tags: ['vaults'],
    request: { query: vaultsQuery },
    responses: {
      200: json(z.array(s.vaultSummary), 'one page of vaults', ex.vaultsExample, pageHeaders),
      304: notModified,
      ...commonErrors,
    },
  }),
  chains: get({
    path: '/v1/chains',
    operationId: 'listChains',
    summary:
      'The chains this deployment follows: each with its head, indexer checkpoint, newest block folded and lags',
    description:
      'One entry per chain that has an indexer checkpoint (when the reader may read the indexer’s tables, `INDEXER_SCHEMA`) or served vaults, by ascending chain id. Each chain is indexed on its own: one chain’s node down shows as its `lag.seconds` growing while the others’ stay put. Read at most once a second (cached 1 s).',
    tags: ['vaults'],
    responses: {
      200: json(z.array(s.chainEntry), 'the chains', ex.chainsExample, {
        'Cache-Control': header('public, max-age=1'),
        ...rateHeaders,
      }),
      ...commonErrors,
    },
  }),
  strategies: get({
    path: '/v1/strategies',
    operationId: 'listStrategies',
    summary: 'Strategy catalogue (whole, at most 1000)',
    tags: ['catalogue'],
    responses: {
      200: json(z.array(s.strategyEntry).max(1000), 'the catalogue', ex.strategiesExample, {
        ...cacheHeaders,
        ...rateHeaders,
      }),
      304: notModified,
      ...commonErrors,
    },
  }),
  universe: get({
    path: '/v1/universe',
    operationId: 'listUniverseAssets',
    summary: 'Eligible assets from the latest screen (whole, at most 1000)',
    tags: ['catalogue'],
    responses: {
      200: json(z.array(s.universeAsset).max(1000), 'the assets', ex.universeExample, {
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
    operationId: 'listUniversePairs',
    summary: 'Eligible pairs from the latest screen (whole, at most 1000)',
    tags: ['catalogue'],
    responses: {
      200: json(z.array(s.universePair).max(1000), 'the pairs', ex.pairsExample, {
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
    operationId: 'getHealth',
    summary: 'Liveness: the process answers',
    tags: ['operations'],
    responses: { 200: json(s.health, 'alive', ex.healthExample), ...healthErrors },
  }),
  ready: get({
    path: '/ready',
    operationId: 'getReadiness',
    summary: 'Readiness: Postgres answers, the projection schema is migrated and not too far behind',
    description:
      'The status code for everyone (load balancers): 200 `{"status":"ready"}` or 503. 503 while the projection is too far behind the log or the chain (beyond `READY_MAX_LAG_RECORDS` records of the log not yet folded, or `READY_MAX_LAG_SECONDS` of chain time behind the indexer\'s checkpoint), so a load balancer drops a reader whose replica fell behind until it catches up. The details (schema, migration, dead letters, vaults behind, the lag in records, blocks and seconds; the reason of a 503) only with the admin token (`Authorization: Bearer <ADMIN_TOKEN>`); the public answer stays `{"status":"ready"}` or the `unavailable` error.',
    tags: ['operations'],
    security: [{}, { adminToken: [] }],
    responses: {
      200: json(s.ready, 'ready', ex.readyExample),
      503: err(
        'not ready (`unavailable`): database unreachable, schema behind, projection too far behind the log or the chain, or shutting down',
        'unavailable',
        'database unavailable',
      ),
      ...opsErrors,
    },
  }),
  metrics: get({
    path: '/metrics',
    operationId: 'getMetrics',
    summary: 'Prometheus metrics (operators: the admin token)',
    description:
      'Answers only requests carrying the deployment’s admin token (`ADMIN_TOKEN`) as `Authorization: Bearer <token>`; 401 otherwise, and to everyone when no token is configured.',
    tags: ['operations'],
    security: [{ adminToken: [] }],
    responses: {
      200: {
        description: 'text exposition format',
        content: { 'text/plain': { schema: z.string(), example: ex.metricsExample } },
      },
      401: err(
        'no or wrong admin token (`unauthorized`)',
        'unauthorized',
        'metrics are served to the operators only: send Authorization: Bearer <ADMIN_TOKEN>',
        { 'WWW-Authenticate': header('Bearer realm="vault-yield-admin"') },
      ),
      ...opsErrors,
    },
  }),
  openapi: get({
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This document',
    tags: ['operations'],
    responses: {
      200: json(z.record(z.string(), z.unknown()), 'OpenAPI 3.1', ex.openapiExample),
      ...opsErrors,
    },
  }),
  docs: get({
    path: '/docs',
    operationId: 'getApiReference',
    summary: 'Interactive reference of this document (Scalar, served by the reader)',
    tags: ['operations'],
    responses: {
      200: { description: 'HTML', content: { 'text/html': { schema: z.string(), example: ex.docsExample } } },
      ...opsErrors,
    },
  }),
};
