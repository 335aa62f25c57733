import type { LedgerRow, StreamRetractEvent, StreamSnapshotEvent } from '@vault-yield/client';
import type { VaultRecord } from '@vault-yield/domain';
import type { Projector } from '@vault-yield/projector';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { errorCode, startReader, type TestReader } from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic, deleteTopics, projector, publish } from '../projector/support.js';
import { openStream, type RawStream, sleep, until } from './support.js';

/**
 * Live streams over two chains (issue #45): the same vault addresses on chains A and B (the
 * generated history on A, a shorter copy of it on B, then more of B alone), folded by the real
 * projector. A stream of a vault id sends that chain's rows and snapshot only; a bare address in
 * GET /v1/stream follows the address on both chains; GET /v1/vault/{bare}/stream answers 409.
 */

const [A, B] = [31337, 31338];
const gen = createHistoryGenerator({ vaults: 2, seed: 45, recordsPerBlock: 3 });
const on = (chainId: number, rs: readonly VaultRecord[]): VaultRecord[] => rs.map((r) => ({ ...r, chainId }));
const id = (chain: number, vault: string) => `eip155:${chain}:${vault}`;

describe('live streams over two chains (SSE, real projector)', () => {
  let db: TestDatabase;
  let proj: Projector;
  let reader: TestReader;
  let topic: string;
  const brokers = kafkaBrokers();
  const opened: RawStream[] = [];
  const open = async (path: string) => {
    const s = await openStream(`${reader.url}${path}`);
    opened.push(s);
    return s;
  };
  const records = gen.take(60);

  beforeAll(async () => {
    topic = uniqueTopic('stream_chains');
    await createTopic(brokers, topic);
    db = await createTestDatabase('stream_chains');
    proj = projector({ brokers, url: db.writerUrl, schema: db.schema, topic, group: 'chains' });
    await proj.start();
    reader = await startReader(db, {
      streams: { maxTotal: 100, perClient: 100, heartbeatMs: 1_000, writeTimeoutMs: 30_000 },
    });
    await publish(brokers, topic, [...on(A, records), ...on(B, records.slice(0, 24))]);
    await proj.caughtUp();
  }, 120_000);

  afterAll(async () => {
    for (const s of opened) s.close();
    await reader?.stop();
    await proj?.stop();
    await db?.drop();
    await deleteTopics();
  });

  it('a vault id streams its own chain; a bare address in /v1/stream follows both; the one-vault route answers 409 to it', async () => {
    const vault = gen.vaults()[0]!.vault;
    const ambiguous = await reader.get(`/v1/vault/${vault}/stream`);
    expect(ambiguous.status).toBe(409);
    expect(errorCode(ambiguous)).toBe('ambiguous_vault');
    expect((ambiguous.body as { error: { candidates: string[] } }).error.candidates).toEqual([
      id(A, vault),
      id(B, vault),
    ]);

    const onA = await open(`/v1/vault/${id(A, vault)}/stream`);
    const onB = await open(`/v1/stream?vault=${id(B, vault)}`);
    const both = await open(`/v1/stream?vault=${vault}`);
    expect([onA.status, onB.status, both.status]).toEqual([200, 200, 200]);
    const snap = (e: { data: string }) => JSON.parse(e.data) as StreamSnapshotEvent;
    // Opening snapshots: each stream's vaults, with their ids and chains.
    expect((await onA.waitFor(1)).map((e) => [e.event, snap(e).id, snap(e).chainId])).toEqual([
      ['snapshot', id(A, vault), A],
    ]);
    expect((await onB.waitFor(1)).map((e) => [e.event, snap(e).id, snap(e).snapshot.chainId])).toEqual([
      ['snapshot', id(B, vault), B],
    ]);
    expect((await both.waitFor(2)).map((e) => snap(e).id)).toEqual([id(A, vault), id(B, vault)]);
    // The two chains' vaults differ (B folded less of the history).
    expect(snap(onA.events[0]!).snapshot.blockNumber).toBeGreaterThan(
      snap(onB.events[0]!).snapshot.blockNumber,
    );

    // More of chain B only: B's streams and the bare address's get it, A's stream nothing.
    await sleep(200);
    await publish(brokers, topic, on(B, records.slice(24, 60)));
    await proj.caughtUp();
    const rowsOf = (s: RawStream) =>
      s.events.filter((e) => e.event === 'ledger').map((e) => JSON.parse(e.data) as LedgerRow);
    const served = await reader.get(`/v1/vault/${id(B, vault)}/events?limit=500`);
    const expected = (served.body as LedgerRow[])
      .filter((r) => r.blockNumber > snap(onB.events[0]!).snapshot.blockNumber)
      .reverse()
      .map((r) => r.id);
    expect(expected.length).toBeGreaterThan(0);
    await until(async () => (rowsOf(onB).length >= expected.length ? true : undefined), 20_000);
    await until(async () => (rowsOf(both).length >= expected.length ? true : undefined), 20_000);
    expect(rowsOf(onB).map((r) => r.id)).toEqual(expected);
    expect(rowsOf(both).map((r) => r.id)).toEqual(expected);
    for (const r of rowsOf(both)) expect([r.chainId, r.vault]).toEqual([B, vault]);
    for (const e of both.events.filter((x) => x.event === 'snapshot').slice(2))
      expect(snap(e).id).toBe(id(B, vault));
    for (const e of both.events.filter((x) => x.event === 'retract'))
      expect((JSON.parse(e.data) as StreamRetractEvent).chainId).toBe(B);
    // A's stream heard nothing past its opening snapshot (a heartbeat later).
    await sleep(1_500);
    expect(onA.events.map((e) => e.event)).toEqual(['snapshot']);
  }, 90_000);
});
