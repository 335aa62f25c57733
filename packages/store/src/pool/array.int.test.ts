import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgArray } from './array.js';
import { createPgPool, type Pool } from './index.js';

/** pgArray's literal on a real Postgres: the array it parses is the one the driver's encoding gives. */
describe('pgArray on Postgres', () => {
  let db: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    db = await createTestDatabase('store_pg_array');
    pool = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'store-pg-array', max: 1 });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it('text[]: any text (Postgres holds no NUL) and NULL parse as the driver sends them', async () => {
    const text = fc.string({ unit: 'binary' }).map((s) => s.replaceAll('\u0000', ''));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.option(text, { nil: null }), { maxLength: 12 }), async (values) => {
        const { rows } = await pool.query<{ ours: (string | null)[]; driver: (string | null)[] }>(
          'select $1::text[] as ours, $2::text[] as driver',
          [pgArray(values), values],
        );
        expect(rows[0]!.ours).toEqual(values);
        expect(rows[0]!.ours).toEqual(rows[0]!.driver);
      }),
      { numRuns: 200 },
    );
  });

  it('int8[] and bool[]: numbers, bigints past 2^53, booleans and NULL', async () => {
    const { rows } = await pool.query<{ n: string[]; b: (boolean | null)[] }>(
      'select $1::int8[]::text[] as n, $2::bool[] as b',
      [pgArray([0, -5, 9007199254740993n, 123456789]), pgArray([true, false, null, undefined])],
    );
    expect(rows[0]!.n).toEqual(['0', '-5', '9007199254740993', '123456789']);
    expect(rows[0]!.b).toEqual([true, false, null, null]);
  });
});
