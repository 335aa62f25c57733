import { createLogger } from '@vault-yield/common';
import {
  type AnvilInstance,
  type DemoResult,
  deployReferenceStack,
  movePrice,
  playDemoScenario,
  type ReferenceStack,
  startAnvil,
} from '@vault-yield/devstack/chain';
import type { SnapshotView } from '@vault-yield/domain';
import { createIndexer, type Indexer } from '@vault-yield/indexer';
import { createLogAdmin } from '@vault-yield/log';
import { createProjector, type Projector } from '@vault-yield/projector';
import { createTestDatabase, kafkaBrokers, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { type Res, startReader, type TestReader } from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The whole pipeline on real parts: a local chain playing the demo → indexer (viem) → Kafka →
 * projector → Postgres → reader (HTTP). Every response is checked against the OpenAPI document.
 */
describe('end to end: chain → indexer → kafka → projector → reader', () => {
  const log = createLogger({ name: 'e2e', level: 'warn' });
  const topic = uniqueTopic('e2e-records');
  let anvil: AnvilInstance;
  let stack: ReferenceStack;
  let demo: DemoResult;
  let db: TestDatabase;
  let indexer: Indexer;
  let projector: Projector;
  let api: TestReader;

  const json = <T>(r: Res): T => {
    expect(r.status, r.text.slice(0, 300)).toBe(200);
    return r.body as T;
  };
  const snapshot = async (vault: string) => json<SnapshotView>(await api.get(`/v1/vault/${vault}/snapshot`));

  beforeAll(async () => {
    anvil = await startAnvil();
    stack = await deployReferenceStack(anvil.rpcUrl);
    demo = await playDemoScenario(stack);
    // As deployed: the migrator migrated; indexer and projector are the writer, with DML only.
    db = await createTestDatabase('e2e', { split: true });
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'e2e' });
    await admin.ensureTopic({ topic, partitions: 4 });
    await admin.close();

    indexer = createIndexer({
      rpcUrl: anvil.rpcUrl,
      chainId: anvil.chainId,
      factory: stack.factory,
      startBlock: Number(stack.deploymentBlock),
      kafka: { brokers: kafkaBrokers(), topic },
      databaseUrl: db.writerUrl,
      schema: db.schema,
      pollIntervalMs: 100,
      logger: log,
    });
    await indexer.start();
    await indexer.waitFor(Number(demo.toBlock));

    projector = createProjector({
      kafka: { brokers: kafkaBrokers(), topic, consumerGroup: 'e2e' },
      databaseUrl: db.writerUrl,
      schema: db.schema,
      migrate: false,
      logger: log,
    });
    await projector.start();
    await projector.caughtUp({ timeoutMs: 60_000 });
    api = await startReader(db);
  }, 180_000);

  afterAll(async () => {
    await api?.stop();
    await projector?.stop();
    await indexer?.stop();
    await anvil?.stop();
    await db?.drop();
  });

  it('lists every vault the factory created', async () => {
    const vaults = json<{ vault: string; owner: string }[]>(await api.get('/v1/vaults?limit=100'));
    expect(vaults.map((v) => v.vault).sort()).toEqual(demo.vaults.map((v) => v.address.toLowerCase()).sort());
    for (const v of demo.vaults) {
      const mine = json<{ vault: string }[]>(
        await api.get(`/v1/vaults?owner=${v.owner.toUpperCase().replace('0X', '0x')}`),
      );
      expect(mine.map((m) => m.vault)).toContain(v.address.toLowerCase());
    }
  });

  it('every snapshot keeps the seed rules: net identity, delta sum, suspension, ranges', async () => {
    for (const v of demo.vaults) {
      const s = await snapshot(v.address);
      expect(s.vault).toBe(v.address.toLowerCase());
      expect(s.owner).toBe(v.owner.toLowerCase());
      expect(s.netUsd).toBeCloseTo(s.valueUsd + s.capitalOutUsd - s.capitalInUsd, 6);
      expect(s.strategyDeltaUsd + s.marketDeltaUsd).toBeCloseTo(s.netUsd, 6);
      if (s.suspension) expect(s.suspension.exitsAvailable).toBe(true);
      // Capital in by source: the owner's deposits, received from others, unexplained (#43 item 4).
      const f = s.fees;
      expect(f.contributedUsd + (f.receivedUsd ?? 0) + (f.unexplainedInUsd ?? 0)).toBeCloseTo(
        s.capitalInUsd,
        5,
      );
      expect(f.withdrawnUsd).toBeCloseTo(s.capitalOutUsd, 6);
      for (const p of s.positions) {
        expect(p.range.lower).toBeLessThan(p.range.upper);
        // Human prices of WETH in USDC, not raw ticks.
        expect(p.range.current).toBeGreaterThan(1000);
        expect(p.range.current).toBeLessThan(10_000);
        // The served range never contradicts inRange, not even at a bound (#43 item 5).
        expect(p.inRange).toBe(p.range.current >= p.range.lower && p.range.current < p.range.upper);
      }
      if (s.status === 'earning') expect(s.positions.every((p) => p.inRange)).toBe(true);
      if (s.status === 'attention') expect(s.drain != null || s.positions.some((p) => !p.inRange)).toBe(true);
    }
  });

  it('the demo looks healthy: no snapshot lists a stale price (its feeds beat as its clock moves)', async () => {
    // The indexer runs at the default heartbeat (3600 s); the demo's steps are 6 h apart and
    // refresh every feed right after each jump (infra/chain/feeds.ts).
    for (const v of demo.vaults) {
      const s = await snapshot(v.address);
      expect(s.stalePrices, v.strategy).toEqual([]);
    }
  });

  it('the exited vault is idle and holds nothing; its loss is exactly what it paid in and did not get back', async () => {
    const carol = demo.vaults.find((v) => v.strategy === 'usdc-arb-gauge')!;
    const s = await snapshot(carol.address);
    expect(s.status).toBe('idle');
    expect(s.valueUsd).toBe(0);
    expect(s.positions).toEqual([]);
    expect(s.netUsd).toBeCloseTo(s.capitalOutUsd - s.capitalInUsd, 6);
  });

  it('the ledger holds every vault event of the chain, newest first, and each tx hash finds its rows', async () => {
    const chainTotal = Object.values(demo.eventCounts).reduce((a, n) => a + n, 0);
    let served = 0;
    for (const v of demo.vaults) {
      let cursor: string | null = null;
      let previous: { blockNumber: number; logIndex: number } | null = null;
      do {
        const res = await api.get(
          `/v1/vault/${v.address}/events?limit=7${cursor ? `&cursor=${cursor}` : ''}`,
        );
        const rows = json<{ txHash: string; type: string; blockNumber: number; logIndex: number }[]>(res);
        for (const row of rows) {
          if (previous) {
            const newerFirst =
              row.blockNumber < previous.blockNumber ||
              (row.blockNumber === previous.blockNumber && row.logIndex < previous.logIndex);
            expect(newerFirst).toBe(true);
          }
          previous = row;
        }
        served += rows.length;
        cursor = res.headers.get('x-next-cursor');
      } while (cursor);
    }
    expect(served).toBe(chainTotal);

    const bob = demo.vaults.find((v) => v.strategy === 'eth-usdc-wide')!;
    const suspended = json<{ txHash: string; data: { reason: string } }[]>(
      await api.get(`/v1/vault/${bob.address}/events?type=suspended`),
    );
    expect(suspended).toHaveLength(1);
    expect(suspended[0]!.data.reason.length).toBeGreaterThan(0);
    const tx = json<{ vault: string; type: string }[]>(
      await api.get(`/v1/tx/${suspended[0]!.txHash.toUpperCase().replace('0X', '0x')}`),
    );
    expect(tx.map((r) => r.type)).toContain('suspended');
  });

  it('equity ends at the snapshot value and is downsampled to the requested bound', async () => {
    for (const v of demo.vaults) {
      const s = await snapshot(v.address);
      const points = json<{ ts: number; valueUsd: number; capitalInUsd: number }[]>(
        await api.get(`/v1/vault/${v.address}/equity?points=5`),
      );
      expect(points.length).toBeGreaterThan(0);
      expect(points.length).toBeLessThanOrEqual(5);
      const last = points.at(-1)!;
      expect(last.valueUsd).toBeCloseTo(s.valueUsd, 6);
      expect(last.capitalInUsd).toBeCloseTo(s.capitalInUsd, 6);
      // A point is written when value or flows change; later records (e.g. a strategy change) only
      // move the snapshot's updatedAt.
      expect(last.ts).toBeLessThanOrEqual(s.updatedAt);
    }
  });

  it('a price move out of range reaches the snapshot through a mark record', async () => {
    const alice = demo.vaults.find((v) => v.strategy === 'eth-usdc-narrow')!;
    const before = await snapshot(alice.address);
    expect(before.positions.length).toBeGreaterThan(0);
    const block = await movePrice(stack, stack.tokens.weth, 3600);
    await indexer.waitFor(Number(block));
    await projector.caughtUp({ timeoutMs: 30_000 });
    const after = await snapshot(alice.address);
    expect(after.updatedAt).toBeGreaterThan(before.updatedAt);
    expect(after.positions[0]!.range.current).toBeGreaterThan(3500);
    expect(after.positions[0]!.inRange).toBe(false);
    expect(after.status).toBe('attention');
    // Prices moved, no flows: the market delta moved and the identities still hold.
    expect(after.capitalInUsd).toBe(before.capitalInUsd);
    expect(after.marketDeltaUsd).not.toBe(before.marketDeltaUsd);
    expect(after.strategyDeltaUsd + after.marketDeltaUsd).toBeCloseTo(after.netUsd, 6);
  });
});
