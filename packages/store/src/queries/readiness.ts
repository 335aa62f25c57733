import { appliedVersions, latestVersion } from '../migrations/index.js';
import { ident, type Pool } from '../pool/index.js';

export interface Readiness {
  /** Highest migration applied to the schema (0 when never migrated). */
  applied: number;
  /** Highest migration this code ships. */
  expected: number;
  /** Every shipped migration is applied. */
  current: boolean;
  /** Records the projector could not apply (0 when none, or before migrations). */
  deadLetters: number;
  /** Distinct vaults those records belong to (their snapshots say `behind`). */
  vaultsBehind: number;
}

/** Throws when Postgres does not answer; otherwise reports the schema's migration state. */
export async function readiness(pool: Pool, schema: string): Promise<Readiness> {
  const versions = await appliedVersions(pool, schema);
  const expected = latestVersion();
  const applied = versions.at(-1) ?? 0;
  let deadLetters = 0;
  let vaultsBehind = 0;
  if (applied >= 9) {
    const { rows } = await pool.query<{ n: number; v: number }>(
      `select count(*)::int as n, count(distinct vault)::int as v from ${ident(schema)}.dead_letters`,
    );
    deadLetters = rows[0]?.n ?? 0;
    vaultsBehind = rows[0]?.v ?? 0;
  }
  return { applied, expected, current: applied >= expected, deadLetters, vaultsBehind };
}
