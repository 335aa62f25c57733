import type { Pool } from '../pool/index.js';

export interface VaultSummaryRow {
  vault: string;
  owner: string;
  chainId: number;
  strategy: string;
  status: string;
  valueUsd: number;
  netUsd: number;
  createdAt: number;
  updatedAt: number;
}

export interface VaultListFilter {
  owner?: string;
  /** Vaults with an address strictly greater than this (keyset, ascending address). */
  after?: string;
  limit: number;
}

export interface VaultPage {
  rows: VaultSummaryRow[];
  /** Address of the last row when more rows follow, else null. */
  next: string | null;
}

const COLUMNS = `vault, owner, chain_id as "chainId", strategy, status,
  (snapshot->>'valueUsd')::float8 as "valueUsd", (snapshot->>'netUsd')::float8 as "netUsd",
  created_at as "createdAt", updated_at as "updatedAt"`;

/** Vaults ordered by address, optionally of one owner (index vault_snapshot_owner). */
export async function vaultPage(pool: Pool, f: VaultListFilter): Promise<VaultPage> {
  const values: unknown[] = [];
  const where: string[] = [];
  if (f.owner !== undefined) {
    values.push(f.owner);
    where.push(`owner = $${values.length}`);
  }
  if (f.after !== undefined) {
    values.push(f.after);
    where.push(`vault > $${values.length}`);
  }
  values.push(f.limit + 1);
  const text = `select ${COLUMNS} from vault_snapshot ${where.length ? `where ${where.join(' and ')}` : ''}
    order by vault limit $${values.length}`;
  const name = `reader.vaults.${f.owner !== undefined ? 'o' : ''}${f.after !== undefined ? 'c' : ''}`;
  const { rows } = await pool.query<VaultSummaryRow>({ name, text, values });
  const more = rows.length > f.limit;
  const page = more ? rows.slice(0, f.limit) : rows;
  return { rows: page, next: more ? (page.at(-1)?.vault ?? null) : null };
}
