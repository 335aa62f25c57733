import { createPgPool, migrations, type Pool } from '@vault-yield/store';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './run.js';

/** `vault-yield migrate` and `migrate --status` as an operator runs them. */
describe('vault-yield migrate --status', () => {
  let db: TestDatabase;
  let pool: Pool;
  const env = () => ({ DATABASE_URL: db.writerUrl, PROJECTION_SCHEMA: db.schema });
  const files = migrations().map((m) => m.file);

  beforeAll(async () => {
    db = await createTestDatabase('cli_migrate');
    pool = createPgPool({ url: db.writerUrl, applicationName: 'cli-migrate-test', max: 1 });
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it('lists every file pending on a new schema, exit 0, and changes nothing', async () => {
    const res = await runCli(['migrate', '--status', '--schema', 'fresh_one'], env());
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines[0]).toBe(`schema fresh_one: 0 applied, ${files.length} pending`);
    for (const f of files)
      expect(res.stdout).toMatch(new RegExp(`^  ${f} +pending +sha256 [0-9a-f]{12}$`, 'm'));
    expect(res.stdout).toContain('run `vault-yield migrate` to apply the pending ones');
    const { rows } = await pool.query(`select 1 from pg_namespace where nspname = 'fresh_one'`);
    expect(rows).toHaveLength(0);
  });

  it('lists applied files with their checksum state; --json for scripts', async () => {
    const res = await runCli(['migrate', '--status'], env());
    expect(res.code).toBe(0);
    expect(res.stdout.split('\n')[0]).toBe(`schema ${db.schema}: ${files.length} applied, 0 pending`);
    for (const f of files)
      expect(res.stdout).toMatch(
        new RegExp(`^  ${f} +applied +\\S+Z +sha256 [0-9a-f]{12} +checksum ok$`, 'm'),
      );

    const json = await runCli(['migrate', '--status', '--json'], env());
    expect(json.code).toBe(0);
    const doc = JSON.parse(json.stdout) as {
      applied: number;
      entries: { file: string; checksumState: string }[];
    };
    expect(doc.applied).toBe(files.length);
    expect(doc.entries.map((e) => e.checksumState)).toEqual(files.map(() => 'match'));
  });

  it('a changed applied file: status says CHANGED (exit 0), migrate refuses it by name (exit 1)', async () => {
    const [first] = migrations();
    await pool.query(
      `update ${db.schema}.schema_migrations set checksum = repeat('f', 64) where version = 1`,
    );
    try {
      const status = await runCli(['migrate', '--status'], env());
      expect(status.code).toBe(0);
      expect(status.stdout).toMatch(new RegExp(`^  ${first!.file} +applied .* CHANGED since applied$`, 'm'));
      expect(status.stdout).toContain(`changed since applied: ${first!.file}`);

      const run = await runCli(['migrate'], env());
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`vault-yield migrate: refusing to migrate schema ${db.schema}`);
      expect(run.stderr).toContain(first!.file);
      expect(run.stderr).not.toMatch(/\n\s+at /); // a message, not a stack
    } finally {
      await pool.query(`update ${db.schema}.schema_migrations set checksum = $1 where version = 1`, [
        first!.checksum,
      ]);
    }
    expect((await runCli(['migrate'], env())).code).toBe(0);
  });
});
