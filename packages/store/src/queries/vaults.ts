import { type VaultId, vaultId } from '@vault-yield/domain';
import type { Pool } from '../pool/index.js';

export interface VaultSummaryRow {
  /** The vault's id, `eip155:{chainId}:{address}`. */
  id: VaultId;
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

/** Position of a vault in the list's order: address, then chain. */
export interface VaultsKey {
  vault: string;
  /** Absent in cursors issued before vaults had a chain in their key: every chain of `vault` is past. */
  chainId?: number;
}

export interface VaultListFilter {
  owner?: string;
  /** Vaults of this chain only. */
  chainId?: number;
  /** Vaults strictly after this key (keyset, ascending address then chain). */
  after?: VaultsKey;
  limit: number;
}

export interface VaultPage {
  rows: VaultSummaryRow[];
  /** Key of the last row when more rows follow, else null. */
  next: VaultsKey | null;
}

const COLUMNS = `vault, owner, chain_id as "chainId", strategy, status,
  (snapshot->>'valueUsd')::float8 as "valueUsd", (snapshot->>'netUsd')::float8 as "netUsd",
  created_at as "createdAt", updated_at as "updatedAt"`;

/**
 * Vaults ordered by address then chain (the same address may be a vault on several chains),
 * optionally of one owner (index vault_snapshot_owner) and / or of one chain (the primary key,
 * (chain_id, vault)).
 */
export async function vaultPage(pool: Pool, f: VaultListFilter): Promise<VaultPage> {
  const values: unknown[] = [];
  const where: string[] = [];
  if (f.owner !== undefined) {
    values.push(f.owner);
    where.push(`owner = $${values.length}`);
  }
  if (f.chainId !== undefined) {
    values.push(f.chainId);
    where.push(`chain_id = $${values.length}`);
  }
  if (f.after !== undefined) {
    values.push(f.after.vault);
    if (f.after.chainId === undefined) where.push(`vault > $${values.length}`);
    else {
      values.push(f.after.chainId);
      // (vault > a or vault = a and chain > c), with `vault >= a` for the index range.
      where.push(
        `vault >= $${values.length - 1} and (vault, chain_id) > ($${values.length - 1}, $${values.length})`,
      );
    }
  }
  values.push(f.limit + 1);
  const text = `select ${COLUMNS} from vault_snapshot ${where.length ? `where ${where.join(' and ')}` : ''}
    order by vault, chain_id limit $${values.length}`;
  const cursor = f.after === undefined ? '' : f.after.chainId === undefined ? 'c0' : 'c';
  const name = `reader.vaults.${f.owner !== undefined ? 'o' : ''}${f.chainId !== undefined ? 'n' : ''}${cursor}`;
  const { rows } = await pool.query<Omit<VaultSummaryRow, 'id'>>({ name, text, values });
  const more = rows.length > f.limit;
  const page = (more ? rows.slice(0, f.limit) : rows).map(({ chainId, ...r }) => ({
    id: vaultId(chainId, r.vault),
    chainId,
    ...r,
  }));
  const last = page.at(-1);
  return { rows: page, next: more && last ? { vault: last.vault, chainId: last.chainId } : null };
}
