import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BEGIN, configRows, configTable, END, README, withTable } from '../../scripts/config-table.js';

describe("README's configuration table", () => {
  it('is the one scripts/config-table.ts generates from the schemas', () => {
    const readme = readFileSync(README, 'utf8');
    expect(readme, 'markers').toContain(BEGIN);
    expect(readme, 'markers').toContain(END);
    // On failure: node --import tsx scripts/config-table.ts --write
    expect(withTable(readme, configTable())).toBe(readme);
  });

  it('describes every variable (doc() beside its field)', () => {
    const undocumented = configRows()
      .filter((r) => r.meaning === '')
      .map((r) => r.variable);
    expect(undocumented).toEqual([]);
  });

  it('names the variables it used to miss', () => {
    const names = configRows().map((r) => r.variable);
    for (const name of [
      'FACTORY_ADDRESS',
      'START_BLOCK',
      'METRICS_PORT',
      'METRICS_HOST',
      'CORS_ORIGINS',
      'PG_POOL_MAX',
      'STATEMENT_TIMEOUT_MS',
      'RPC_TIMEOUT_MS',
      'MARK_INTERVAL_BLOCKS',
      'MARK_MIN_INTERVAL_MS',
      'VIEWS_SCHEMA',
      'READER_ROLE',
      'DATABASE_ADMIN_URL',
      'LOG_FORMAT',
      'ADMIN_TOKEN',
      'CLIENT_CONCURRENCY',
      'CLIENT_QUEUE',
    ])
      expect(names).toContain(name);
  });
});
