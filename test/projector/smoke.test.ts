import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { afterAll, describe, expect, it } from 'vitest';
import { checksums, createTopic, deleteTopics, projector, publish, query } from './support.js';

describe('projector smoke', () => {
  const dbs: TestDatabase[] = [];
  afterAll(async () => {
    for (const db of dbs) await db.drop();
    await deleteTopics();
  });

  it('folds a generated history into the tables', async () => {
    const brokers = kafkaBrokers();
    const topic = uniqueTopic('proj-smoke');
    await createTopic(brokers, topic);
    const records = createHistoryGenerator({ vaults: 50, seed: 3 }).take(5000);
    await publish(brokers, topic, records);
    const db = await createTestDatabase('proj_smoke');
    dbs.push(db);
    const p = projector({ brokers, url: db.writerUrl, schema: db.schema, topic, group: 'g' });
    await p.start();
    await p.caughtUp();
    await p.stop();
    const sums = await checksums(db.writerUrl, db.schema);
    console.log(sums);
    // Marks (sequenced) have no ledger rows (migration 0013): every other record has one.
    expect(sums.ledger?.rows).toBe(records.filter((r) => r.type !== 'mark').length);
    expect(sums.vault_snapshot?.rows).toBe(50);
    expect(sums.dead_letters?.rows).toBe(0);
    const [row] = await query<{ n: number }>(
      db.writerUrl,
      db.schema,
      'select sum(records_applied)::int as n from vault_snapshot',
    );
    expect(row?.n).toBe(5000);
  });
});
