/**
 * What users see: the reader's API (GET /v1/vaults, GET /v1/vault/{id}/snapshot). The audit
 * compares the served figure, not the projection's row, so a fault anywhere between the fold and
 * the HTTP answer (a view pointing at the wrong schema, a cache, a serialisation) is caught too.
 * A deployment may follow several chains (#45): the audit checks the chain its node is on, so it
 * lists that chain's vaults (`?chainId=`) and names each by its id (`eip155:{chain}:{address}`) —
 * a bare address that is a vault on several chains is ambiguous (409).
 */
import { CommandFailure } from '../ops/env.js';
import { endpointOf } from '../ops/failure.js';

export interface ServedSnapshot {
  vault: string;
  valueUsd: number;
  blockNumber: number;
}

/** The reader did not answer, or answered something else than asked for: one line naming READER_URL. */
export class ReaderFailure extends CommandFailure {
  override name = 'ReaderFailure';
}

/** The code of a fetch that failed (ECONNREFUSED, …, or the time-out), from its causes. */
function codeOf(err: unknown): string {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    if (e.name === 'TimeoutError') return 'timed out';
  }
  return err instanceof Error ? err.message : String(err);
}

const PAGE = 500;

/**
 * The reader at `baseUrl`, for the vaults of one chain: `chainId` answers it (the audited node's
 * own, asked once, when first needed).
 */
export function createServedReader(baseUrl: string, chainId: () => Promise<number>, timeoutMs = 15_000) {
  const root = baseUrl.replace(/\/+$/, '');
  let chain: Promise<number> | undefined;
  const chainOf = () => {
    chain ??= chainId();
    return chain;
  };
  const idOf = async (vault: string) => `eip155:${await chainOf()}:${vault.toLowerCase()}`;

  async function get(path: string): Promise<Response> {
    try {
      return await fetch(`${root}${path}`, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new ReaderFailure(
        `the reader does not answer GET ${path.split('?')[0]} (${codeOf(err)}): is it up? READER_URL points at ${endpointOf(root) ?? 'an unparsable URL'}`,
        { cause: err },
      );
    }
  }

  return {
    /** The chain's vault addresses by ascending address (the reader's order), at most `limit` (all when undefined). */
    async vaults(limit?: number): Promise<string[]> {
      const out: string[] = [];
      let cursor: string | null = null;
      do {
        const size = Math.min(PAGE, limit === undefined ? PAGE : limit - out.length);
        const path: string = `/v1/vaults?chainId=${await chainOf()}&limit=${size}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const res = await get(path);
        if (!res.ok)
          throw new ReaderFailure(
            `the reader answered GET /v1/vaults with ${res.status}: is READER_URL the reader's?`,
          );
        const rows = (await res.json()) as { vault: string }[];
        out.push(...rows.map((r) => r.vault));
        cursor = res.headers.get('x-next-cursor');
      } while (cursor && (limit === undefined || out.length < limit));
      return limit === undefined ? out : out.slice(0, limit);
    },
    /** The vault's newest ledger row's block (number and hash), or null when it has none. */
    async newestRow(vault: string): Promise<{ blockNumber: number; blockHash: string } | null> {
      const path = `/v1/vault/${await idOf(vault)}/events?limit=1`;
      const res = await get(path);
      if (res.status === 404) return null;
      if (!res.ok) throw new ReaderFailure(`the reader answered GET ${path} with ${res.status}`);
      const [row] = (await res.json()) as { blockNumber: number; blockHash: string }[];
      return row ? { blockNumber: row.blockNumber, blockHash: row.blockHash } : null;
    },
    /** The served snapshot's value and block, or null when the reader knows no such vault (404). */
    async snapshot(vault: string): Promise<ServedSnapshot | null> {
      const path = `/v1/vault/${await idOf(vault)}/snapshot`;
      const res = await get(path);
      if (res.status === 404) return null;
      if (!res.ok) throw new ReaderFailure(`the reader answered GET ${path} with ${res.status}`);
      const body = (await res.json()) as Partial<ServedSnapshot>;
      if (typeof body.valueUsd !== 'number' || typeof body.blockNumber !== 'number')
        throw new ReaderFailure(`GET ${path} served no valueUsd or blockNumber`);
      return { vault: vault.toLowerCase(), valueUsd: body.valueUsd, blockNumber: body.blockNumber };
    },
  };
}

export type ServedReader = ReturnType<typeof createServedReader>;
