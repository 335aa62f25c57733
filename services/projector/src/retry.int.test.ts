import { createLogger } from '@vault-yield/common';
import { encodeRecord, type VaultRecord, vaultIdOf } from '@vault-yield/domain';
import type { LogBatch } from '@vault-yield/log';
import { createPgPool, createProjectionStore, type Pool, schemaChecksums } from '@vault-yield/store';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyBatch } from './apply.js';
import { retryDeadLetters } from './retry.js';
import { type Decoded, decode } from './rows.js';

const log = createLogger({ name: 'retry-test', level: 'silent' });

const message = (r: VaultRecord, offset: number) => {
  const value = encodeRecord(r);
  return {
    partition: 0,
    offset: String(offset),
    key: Buffer.from(r.vault),
    value,
    timestamp: 0,
    decoded: decode(value),
  };
};
const batchOf = (msgs: ReturnType<typeof message>[], next: number): LogBatch<Decoded> => ({
  topic: 't',
  partition: 0,
  messages: msgs,
  commit: { groupId: 'g', topic: 't', partition: 0, nextOffset: String(next) },
  highWatermark: String(next),
});

describe('dead-letter retry', () => {
  let clean: TestDatabase;
  let dirty: TestDatabase;
  const pools: Pool[] = [];
  const pool = (db: TestDatabase) => {
    const p = createPgPool({ url: db.writerUrl, schema: db.schema, applicationName: 'retry-test', max: 2 });
    pools.push(p);
    return p;
  };
  beforeAll(async () => {
    clean = await createTestDatabase('retry_clean');
    dirty = await createTestDatabase('retry_dirty');
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end()));
    await clean.drop();
    await dirty.drop();
  });

  it('re-applies letters in the vault order, exactly once, and leaves the tables of a clean run', async () => {
    const records = createHistoryGenerator({ vaults: 3, seed: 13 }).take(60);
    // The same vaults (addresses) on a second chain, folded whole in both runs: a retry of a
    // vault on one chain re-folds that chain's vault only.
    const twin = records.map((r) => ({ ...r, chainId: r.chainId + 1 }));
    const all = records.map(message);
    const twins = twin.map((r, i) => message(r, all.length + i));
    const cleanStore = createProjectionStore(pool(clean));
    await cleanStore.transaction((tx) =>
      applyBatch(tx, batchOf([...all, ...twins], all.length + twins.length), log),
    );

    // The dirty run: two records of one vault became dead letters (as an older, buggy fold
    // would have left them), the vault's later records were folded without them.
    const vault = records[5]!.vault;
    const id = vaultIdOf(records[5]!);
    const lettered = all.filter((_m, i) => i > 5 && records[i]!.vault === vault).slice(0, 2);
    const dirtyPool = pool(dirty);
    const dirtyStore = createProjectionStore(dirtyPool);
    await dirtyStore.transaction(async (tx) => {
      const r = await applyBatch(
        tx,
        batchOf([...all.filter((m) => !lettered.includes(m)), ...twins], all.length + twins.length),
        log,
      );
      expect(r.kind).toBe('applied');
      await tx.insertDeadLetters(
        lettered.map((m) => ({
          topic: 't',
          partition: 0,
          offset: m.offset,
          key: m.key,
          value: m.value,
          reason: 'fold crashed: a bug since fixed',
          vault,
          chainId: records[5]!.chainId,
          kind: 'fold' as const,
        })),
      );
      await tx.markBehind([id]);
    });
    const behind = await dirtyPool.query<{ b: unknown }>(
      `select snapshot::jsonb -> 'behind' as b from vault_snapshot where chain_id = $2 and vault = $1`,
      [vault, records[5]!.chainId],
    );
    // The twin on the other chain has no letters: not behind.
    const twinBehind = await dirtyPool.query<{ b: unknown }>(
      `select snapshot::jsonb -> 'behind' as b from vault_snapshot where chain_id = $2 and vault = $1`,
      [vault, records[5]!.chainId + 1],
    );
    expect(twinBehind.rows).toEqual([{ b: null }]);
    // Without the two, the vault's later records are a gap in its numbers: held, not folded.
    const held = records.filter((r, i) => r.vault === vault && i > all.indexOf(lettered[0]!)).length - 1;
    expect(behind.rows[0]?.b).toMatchObject({
      deadLetters: 2 + held,
      kinds: ['fold', 'gap'],
      first: { partition: 0, offset: lettered[0]!.offset },
      gap: { missingFrom: records[all.indexOf(lettered[0]!)]!.seq },
    });

    const outcomes = await retryDeadLetters(dirtyStore, log);
    expect(outcomes).toEqual([{ vault: id, ids: expect.any(Array), ok: true }]);
    expect(await retryDeadLetters(dirtyStore, log)).toEqual([]); // exactly once: nothing left

    const a = await schemaChecksums(pool(clean), clean.schema);
    const b = await schemaChecksums(dirtyPool, dirty.schema);
    for (const table of ['ledger', 'equity_points', 'positions', 'vault_snapshot', 'dead_letters']) {
      expect({ table, ...b[table] }).toEqual({ table, ...a[table] });
    }
  });
});
