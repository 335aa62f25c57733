import { splitVaultIds, type VaultId, type VaultRef, vaultId } from '@vault-yield/domain';
import type { Pool } from '../pool/index.js';

/** A vault's snapshot as stored: the SnapshotView JSON text (validated on write) and its ETag. */
export interface SnapshotJson {
  /** The vault's id (`eip155:{chainId}:{address}`). */
  id: VaultId;
  chainId: number;
  /** Its address (lowercase). */
  vault: string;
  /** SnapshotView as JSON text, sent as is: no parse/serialise on the read path. */
  json: string;
  /** Opaque entity tag: changes whenever a record is applied to the vault. */
  etag: string;
}

interface Row {
  chainId: number;
  vault: string;
  json: string;
  etag: string;
}
const withId = (r: Row): SnapshotJson => ({ id: vaultId(r.chainId, r.vault), ...r });

// One indexed row; the ETag is a digest of (last_record_id, records_applied).
const COLUMNS = `chain_id as "chainId", vault, snapshot::text as json,
  md5(last_record_id || '/' || records_applied) as etag`;
// By id: the primary key (chain_id, vault); by bare address: vault_snapshot_address (every chain).
const MANY = `select ${COLUMNS} from vault_snapshot
    where (chain_id, vault) in (select * from unnest($1::int[], $2::text[]))
  union all
  select ${COLUMNS} from vault_snapshot where vault = any($3::text[])`;

export async function snapshotOf(pool: Pool, ref: VaultRef): Promise<SnapshotJson | null> {
  const { rows } = await pool.query<Row>({
    name: 'reader.snapshot',
    text: `select ${COLUMNS} from vault_snapshot where chain_id = $1 and vault = $2`,
    values: [ref.chainId, ref.vault],
  });
  return rows[0] ? withId(rows[0]) : null;
}

/**
 * Several snapshots in one round trip (the reader batches concurrent requests through it), by
 * vault id. Keyed by vault id.
 */
export async function snapshotsOf(pool: Pool, ids: readonly string[]): Promise<Map<VaultId, SnapshotJson>> {
  const found = await snapshotsMatching(pool, ids, []);
  return new Map(found.map((s) => [s.id, s]));
}

/**
 * The snapshots of vault ids and of bare addresses (every chain a vault has that address on), in
 * one round trip: what the reader's snapshot loader batches. A row found both ways comes twice.
 */
export async function snapshotsMatching(
  pool: Pool,
  ids: readonly string[],
  addresses: readonly string[],
): Promise<SnapshotJson[]> {
  const { chainIds, vaults } = splitVaultIds(ids);
  const { rows } = await pool.query<Row>({
    name: 'reader.snapshots',
    text: MANY,
    values: [chainIds, vaults, addresses],
  });
  return rows.map(withId);
}

export async function vaultExists(pool: Pool, ref: VaultRef): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: 'reader.vault-exists',
    text: 'select 1 from vault_snapshot where chain_id = $1 and vault = $2',
    values: [ref.chainId, ref.vault],
  });
  return (rowCount ?? 0) > 0;
}

/**
 * The vaults at `address` on every chain (vault_snapshot_address), by ascending chain: what a bare
 * address names (the API answers 409 when there are several).
 */
export async function vaultsAt(pool: Pool, address: string): Promise<VaultRef[]> {
  const { rows } = await pool.query<VaultRef>({
    name: 'reader.vaults-at',
    text: 'select chain_id as "chainId", vault from vault_snapshot where vault = $1 order by chain_id',
    values: [address.toLowerCase()],
  });
  return rows;
}
