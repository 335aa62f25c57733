import { vaultIdOf } from '@vault-yield/domain';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { blockHash, createHistoryGenerator } from '@vault-yield/test-kit/history';
import { startReader } from '@vault-yield/test-kit/reader';
import { afterAll, describe, expect, it } from 'vitest';
import { checksums, createTopic, deleteTopics, projector, publish, query, VAULT_TABLES } from './support.js';

const brokers = () => kafkaBrokers();
const dbs: TestDatabase[] = [];
afterAll(async () => {
  for (const db of dbs) await db.drop();
  await deleteTopics();
});

async function database(label: string): Promise<TestDatabase> {
  const db = await createTestDatabase(label);
  dbs.push(db);
  return db;
}

/**
 * A vault born in blocks a reorg orphaned, whose creation the canonical chain never makes again
 * (#43 item 8c): the revert leaves it with no state at all. The record contract: every row of the
 * vault vanishes (snapshot, positions, equity points, ledger, its record bundles and any record of
 * it held in dead letters), the projection equals one that never saw the vault, and the revert's
 * commit names the vault and retracts every ledger row it had (stream_commits: the stream sends a
 * `retract` of them and no snapshot after), and the reader answers 404 for it. Records of the
 * orphaned blocks held behind a gap are void with the blocks: they leave the dead letters (else the
 * vault stays held, with no state, forever).
 */
describe('projector: a vault born in orphaned blocks and never created again', () => {
  it.each([
    ['a later batch', false],
    ['the same batch', true],
  ])(
    'vanishes (the revert in %s): its rows go, its held records too, the stream retracts them, the reader answers 404',
    async (_, oneBatch) => {
      const gen = createHistoryGenerator({ vaults: 2, seed: 23 });
      const history = gen.take(40);
      const fresh = createHistoryGenerator({ vaults: 1, seed: 98, startBlock: gen.block() + 10 });
      const born = fresh.take(6);
      expect(born[0]!.type).toBe('vault.created');
      const vault = born[0]!.vault;
      const orphaned = born.map((r) => ({ ...r, blockHash: blockHash(r.blockNumber, 1) }));
      // Its third record never arrived before the reorg: the ones after it are held (a gap).
      const published = orphaned.filter((r) => r.seq !== 3);
      const first = orphaned[0]!.blockNumber;
      const revert = fresh.record(
        fresh.vaults()[0]!,
        'revert',
        {
          fromBlock: first,
          orphanedBlockHashes: [...new Set(orphaned.map((r) => r.blockHash))],
          fromSeq: 1,
        },
        { block: first - 1, blockHash: blockHash(first - 1) },
      );
      const reorged = uniqueTopic(`proj-born-gone${oneBatch ? '-1' : ''}`);
      const straight = uniqueTopic(`proj-born-never${oneBatch ? '-1' : ''}`);
      await createTopic(brokers(), reorged, 1);
      await createTopic(brokers(), straight, 1);
      await publish(brokers(), straight, history);

      const db = await database(`born_gone${oneBatch ? '_1' : ''}`);
      const p = projector({
        brokers: brokers(),
        url: db.writerUrl,
        schema: db.schema,
        topic: reorged,
        group: 'bg',
      });
      await p.start();
      try {
        // The vault is folded (its rows exist); the revert comes in a later batch, or with them.
        await publish(brokers(), reorged, [...history, ...published, ...(oneBatch ? [revert] : [])]);
        await p.caughtUp();
        const tables = [
          'vault_snapshot',
          'positions',
          'equity_points',
          'ledger',
          'record_bundles',
          'dead_letters',
        ];
        // vault is text in some tables, bytea in others: either spelling.
        const rowsOf = async () => {
          const out: Record<string, number> = {};
          for (const t of tables)
            out[t] = (
              await query<{ n: number }>(
                db.writerUrl,
                db.schema,
                `select count(*)::int as n from ${t} where vault::text in ($1, '\\x' || substr($1, 3))`,
                [vault],
              )
            )[0]!.n;
          return out;
        };
        const before = await rowsOf();
        if (!oneBatch) {
          expect(before.vault_snapshot).toBe(1);
          expect(before.ledger).toBeGreaterThan(0);
          expect(before.dead_letters).toBe(published.length - 2);
        }
        if (!oneBatch) {
          await publish(brokers(), reorged, [revert]);
          await p.caughtUp();
        }
        expect(await rowsOf()).toEqual({
          vault_snapshot: 0,
          positions: 0,
          equity_points: 0,
          ledger: 0,
          record_bundles: 0,
          dead_letters: 0,
        });
        // The revert's commit retracts every row the vault had.
        const [commit] = await query<{ retracted: string[] }>(
          db.writerUrl,
          db.schema,
          'select retracted from stream_commits where retracted is not null order by seq desc limit 1',
        );
        if (!oneBatch) expect(commit?.retracted).toHaveLength(before.ledger!);

        const [last] = await query<{ vaults: string[] }>(
          db.writerUrl,
          db.schema,
          'select vaults from stream_commits order by seq desc limit 1',
        );
        // Streams name vault ids (a vault is its chain and address).
        expect(last?.vaults).toContain(vaultIdOf(born[0]!));
        const api = await startReader(db);
        try {
          for (const path of ['', '/snapshot', '/events', '/equity'])
            expect((await api.get(`/v1/vault/${vault}${path}`)).status).toBe(404);
          const list = (await api.get('/v1/vaults?limit=500')).body as { vaults?: { address: string }[] };
          expect(JSON.stringify(list)).not.toContain(vault);
        } finally {
          await api.stop();
        }
      } finally {
        await p.stop();
      }
      const want = await database(`born_never${oneBatch ? '_1' : ''}`);
      const q = projector({
        brokers: brokers(),
        url: want.writerUrl,
        schema: want.schema,
        topic: straight,
        group: 'bn',
      });
      await q.start();
      await q.caughtUp();
      await q.stop();
      expect(await checksums(db.writerUrl, db.schema, VAULT_TABLES)).toEqual(
        await checksums(want.writerUrl, want.schema, VAULT_TABLES),
      );
    },
  );
});
