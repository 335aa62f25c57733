import { OpenAPIHono } from '@hono/zod-openapi';
import { activityTypes, type VaultRef, vaultIdOf } from '@vault-yield/domain';
import {
  type ChainStatus,
  chainStatuses,
  equitySeries,
  ledgerPage,
  ledgerTxPage,
  liveLog,
  type Pool,
  vaultExists,
  vaultPage,
  vaultsAt,
} from '@vault-yield/store';
import type { Context } from 'hono';
import { ambiguousVault, notFound } from '../errors.js';
import { bodyEtag, jsonArray, notModified, sendJson, sendNotModified } from '../http.js';
import { routes } from '../openapi/routes.js';
import { encodeEventsCursor, encodeTxCursor, encodeVaultsCursor, type VaultName } from '../params.js';
import { createSnapshotLoader } from '../snapshot-loader.js';
import { validationHook } from './declare.js';
import type { RouteDeps } from './deps.js';

/** `Link: <…>; rel="next"` for the same path and query with `cursor` replaced. */
function nextLink(path: string, url: string, cursor: string): string {
  const q = url.indexOf('?');
  const params = new URLSearchParams(q >= 0 ? url.slice(q + 1) : '');
  params.delete('cursor');
  params.append('cursor', cursor);
  return `<${path}?${params.toString()}>; rel="next"`;
}

/** The vault name as the reader writes it back (a Link, a message): the id, or the lowercase address. */
export const nameText = (name: VaultName): string => ('id' in name ? name.id : name.address);

/**
 * The one vault a name names, and whether it is known to exist: an id as given (its existence
 * read by the caller beside its own query); a bare address through vault_snapshot_address —
 * the vault on the one chain that has it, 404 on none, 409 `ambiguous_vault` on several.
 */
export async function resolveVault(pool: Pool, name: VaultName): Promise<{ ref: VaultRef; known: boolean }> {
  if ('id' in name) return { ref: name.ref, known: false };
  const refs = await vaultsAt(pool, name.address);
  if (refs.length === 0) throw notFound(`vault ${name.address} not found`);
  if (refs.length > 1) throw ambiguousVault(name.address, refs.map(vaultIdOf));
  return { ref: refs[0]!, known: true };
}

/** How long one reading of the chains serves `/v1/chains` (every caller within it shares it). */
const CHAINS_FRESH_MS = 1_000;

// Bodies are JSON text straight from the store (never re-serialised); the route declarations give
// their types to the client, and the tests check every body against the generated document.
// `as never` tells the typed handler so.

export function vaultRoutes({ pool, config }: RouteDeps) {
  const cache = `public, max-age=${config.cacheMaxAgeS}`;
  const snapshots = createSnapshotLoader(pool, Math.max(1, Math.ceil(config.poolMax / 2)));

  /** Weak-ETag'd JSON list with the vault-resource cache policy. */
  const list = (c: Context, body: string, extra: Record<string, string> = {}): never => {
    const etag = bodyEtag(body);
    const headers = { 'Cache-Control': cache, ETag: etag };
    if (notModified(c, etag)) return sendNotModified(c, headers) as never;
    return sendJson(c, body, { ...headers, ...extra }) as never;
  };

  /** A query of one vault, with the 404 of an unknown one (an id's existence read beside it). */
  const ofVault = async <T>(name: VaultName, read: (ref: VaultRef) => Promise<T>): Promise<T> => {
    const { ref, known } = await resolveVault(pool, name);
    const [exists, got] = await Promise.all([known || vaultExists(pool, ref), read(ref)]);
    if (!exists) throw notFound(`vault ${nameText(name)} not found`);
    return got;
  };

  let chains: { at: number; reading: Promise<ChainStatus[]> } | null = null;
  const readChains = async (): Promise<ChainStatus[]> => {
    // The indexer's tables of the live log (after a reindex, its own), else the configured ones.
    const live = await liveLog(pool, config.schema).catch(() => null);
    const indexerSchema = live?.indexerSchema ?? config.freshness.indexerSchema;
    return chainStatuses(pool, config.schema, { indexerSchema });
  };

  return new OpenAPIHono({ defaultHook: validationHook })
    .openapi(routes.snapshot, async (c) => {
      const name = c.req.valid('param').vault;
      const rows = await snapshots.load(name);
      const row = rows[0];
      if (!row) throw notFound(`vault ${nameText(name)} not found`);
      if (rows.length > 1)
        throw ambiguousVault(
          nameText(name),
          rows.map((r) => r.id),
        );
      const headers = { 'Cache-Control': cache, ETag: `"${row.etag}"` };
      if (notModified(c, headers.ETag)) return sendNotModified(c, headers) as never;
      return sendJson(c, row.json, headers) as never;
    })
    .openapi(routes.equity, async (c) => {
      const name = c.req.valid('param').vault;
      const q = c.req.valid('query');
      const points = await ofVault(name, (ref) =>
        equitySeries(pool, { ...ref, from: q.from, to: q.to, points: q.points }),
      );
      return list(c, JSON.stringify(points));
    })
    .openapi(routes.events, async (c) => {
      const name = c.req.valid('param').vault;
      const q = c.req.valid('query');
      const page = await ofVault(name, (ref) =>
        ledgerPage(pool, {
          ...ref,
          types: q.type ?? activityTypes,
          since: q.since,
          until: q.until,
          after: q.cursor,
          limit: q.limit,
        }),
      );
      const extra: Record<string, string> = {};
      if (page.next) {
        const cursor = encodeEventsCursor(page.next);
        extra['X-Next-Cursor'] = cursor;
        extra.Link = nextLink(`/v1/vault/${nameText(name)}/events`, c.req.url, cursor);
      }
      return list(c, jsonArray(page.rows), extra);
    })
    .openapi(routes.tx, async (c) => {
      const hash = c.req.valid('param').hash;
      const q = c.req.valid('query');
      const page = await ledgerTxPage(pool, {
        txHash: hash,
        types: activityTypes,
        after: q.cursor,
        limit: q.limit,
      });
      if (page.rows.length === 0 && !q.cursor) throw notFound(`no activity recorded for transaction ${hash}`);
      const extra: Record<string, string> = {};
      if (page.next) {
        const cursor = encodeTxCursor(page.next);
        extra['X-Next-Cursor'] = cursor;
        extra.Link = nextLink(`/v1/tx/${hash}`, c.req.url, cursor);
      }
      return list(c, jsonArray(page.rows), extra);
    })
    .openapi(routes.vaults, async (c) => {
      const q = c.req.valid('query');
      const page = await vaultPage(pool, {
        owner: q.owner,
        chainId: q.chainId,
        after: q.cursor,
        limit: q.limit,
      });
      const extra: Record<string, string> = {};
      if (page.next) {
        const cursor = encodeVaultsCursor(page.next);
        extra['X-Next-Cursor'] = cursor;
        extra.Link = nextLink('/v1/vaults', c.req.url, cursor);
      }
      return list(c, JSON.stringify(page.rows), extra);
    })
    .openapi(routes.chains, async (c) => {
      const now = Date.now();
      if (!chains || now - chains.at >= CHAINS_FRESH_MS) {
        const reading = readChains();
        chains = { at: now, reading };
        // A failed reading is not kept.
        reading.catch(() => {
          if (chains?.reading === reading) chains = null;
        });
      }
      const body = JSON.stringify(await chains.reading);
      return sendJson(c, body, { 'Cache-Control': 'public, max-age=1' }) as never;
    });
}
