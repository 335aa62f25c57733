import type { Pool } from '../pool/index.js';

/** A vault's snapshot as stored: the SnapshotView JSON text (validated on write) and its ETag. */
export interface SnapshotJson {
  vault: string;
  /** SnapshotView as JSON text, sent as is: no parse/serialise on the read path. */
  json: string;
  /** Opaque entity tag: changes whenever a record is applied to the vault. */
  etag: string;
}

// One indexed row; the ETag is a digest of (last_record_id, records_applied).
const ONE = `select vault, snapshot::text as json, md5(last_record_id || '/' || records_applied) as etag
  from vault_snapshot where vault = $1`;
const MANY = `select vault, snapshot::text as json, md5(last_record_id || '/' || records_applied) as etag
  from vault_snapshot where vault = any($1::text[])`;

export async function snapshotOf(pool: Pool, vault: string): Promise<SnapshotJson | null> {
  const { rows } = await pool.query<SnapshotJson>({ name: 'reader.snapshot', text: ONE, values: [vault] });
  return rows[0] ?? null;
}

/** Several snapshots in one round trip (the reader batches concurrent requests through it). */
export async function snapshotsOf(pool: Pool, vaults: readonly string[]): Promise<Map<string, SnapshotJson>> {
  const { rows } = await pool.query<SnapshotJson>({
    name: 'reader.snapshots',
    text: MANY,
    values: [vaults],
  });
  return new Map(rows.map((r) => [r.vault, r]));
}

export async function vaultExists(pool: Pool, vault: string): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: 'reader.vault-exists',
    text: 'select 1 from vault_snapshot where vault = $1',
    values: [vault],
  });
  return (rowCount ?? 0) > 0;
}
