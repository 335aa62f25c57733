import { appliedVersions, latestVersion } from '../migrations/index.js';
import type { Pool } from '../pool/index.js';

export interface Readiness {
  /** Highest migration applied to the schema (0 when never migrated). */
  applied: number;
  /** Highest migration this code ships. */
  expected: number;
  /** Every shipped migration is applied. */
  current: boolean;
}

/** Throws when Postgres does not answer; otherwise reports the schema's migration state. */
export async function readiness(pool: Pool, schema: string): Promise<Readiness> {
  const versions = await appliedVersions(pool, schema);
  const expected = latestVersion();
  const applied = versions.at(-1) ?? 0;
  return { applied, expected, current: applied >= expected };
}
