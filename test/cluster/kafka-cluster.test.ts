import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { type Env, kafkaSecurity } from '@vault-yield/common';
import {
  type AnvilInstance,
  deployReferenceStack,
  playDemoScenario,
  startAnvil,
} from '@vault-yield/devstack/chain';
import type { LocalCluster } from '@vault-yield/devstack/kafka';
import { encodeBinaryRecord, type VaultRecord } from '@vault-yield/domain';
import { createIndexer } from '@vault-yield/indexer';
import { createBatchConsumer, createLogAdmin, createPublisher, type LogClientConfig } from '@vault-yield/log';
import { loadProjectorEnv } from '@vault-yield/projector';
import { createTestDatabase, type TestDatabase, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import {
  expectedRecords,
  normalized,
  readTopic as readIndexedTopic,
  recordId,
  silent,
} from '@vault-yield/test-kit/indexer';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checksums, projector, query, VAULT_TABLES } from '../projector/support.js';
import { startTestCluster } from './support.js';

/**
 * The log on a 3-broker cluster (RF 3, min.insync.replicas=2): what a single broker can never
 * show, because no partition leader ever moves there.
 */
let cluster: LocalCluster;
const dbs: TestDatabase[] = [];

beforeAll(async () => {
  cluster = await startTestCluster();
}, 180_000);

afterAll(async () => {
  for (const db of dbs) await db.drop().catch(() => {});
  await cluster?.stop();
});

const PARTITIONS = 8;
const RECORDS = 20_000;
const BATCH = 500;
/**
 * Kill runs: each broker is the victim once. The unpatched client lost acknowledged records within
 * a single run of 20,000 (NOTES.md: 160 of 20,000); two more runs cost the suite ≈ 40 s.
 */
const KILL_RUNS = 3;

const digest = (value: Buffer | null) =>
  createHash('sha1')
    .update(value ?? Buffer.alloc(0))
    .digest('hex');

/** Created as the indexer creates its topic: no replication factor given (3 on this cluster). */
async function createTopic(client: LogClientConfig, topic: string): Promise<void> {
  const admin = await createLogAdmin(client);
  try {
    await admin.ensureTopic({ topic, partitions: PARTITIONS });
  } finally {
    await admin.close();
  }
}

/** Every value in the topic, as digests, read through the project's batch consumer. */
async function readTopic(
  client: LogClientConfig,
  topic: string,
): Promise<{ values: Set<string>; total: number }> {
  // Right after a broker comes back, a partition may still be electing its leader: ask again.
  let end = 0;
  for (let attempt = 0; ; attempt++) {
    const admin = await createLogAdmin(client);
    try {
      end = (await admin.offsets(topic)).reduce((n, p) => n + Number(p.high), 0);
      break;
    } catch (err) {
      if (attempt >= 30 || !/leader/i.test(String(err))) throw err;
      await new Promise((r) => setTimeout(r, 1_000));
    } finally {
      await admin.close();
    }
  }
  const values = new Set<string>();
  let total = 0;
  const consumer = createBatchConsumer<string>({
    ...client,
    groupId: `count-${randomBytes(4).toString('hex')}`,
    topic,
    decode: digest,
    storedOffsets: async () => new Map(),
    handleBatch: async (batch) => {
      for (const m of batch.messages) values.add(m.decoded);
      total += batch.messages.length;
      return { applied: true };
    },
    sessionTimeoutMs: 6_000,
    maxWaitTimeMs: 100,
  });
  await consumer.start();
  try {
    while (total < end) await new Promise((r) => setTimeout(r, 100));
  } finally {
    await consumer.stop();
  }
  return { values, total };
}

async function project(topic: string, label: string, brokers = cluster.brokers) {
  const db = await createTestDatabase(label);
  dbs.push(db);
  const p = projector({ brokers, url: db.writerUrl, schema: db.schema, topic, group: label });
  await p.start();
  await p.caughtUp({ timeoutMs: 180_000 });
  await p.stop();
  const sums = await checksums(db.writerUrl, db.schema, VAULT_TABLES);
  await db.drop();
  dbs.splice(dbs.indexOf(db), 1);
  return sums;
}

/** Java's String.hashCode, as Kafka picks a group's __consumer_offsets partition with it. */
function javaHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** A group's coordinator, how many of `topic`'s partitions each node leads, its replication factor. */
async function leaders(
  groupId: string,
  topic: string,
): Promise<{ coordinator: number; leads: Map<number, number>; replicas: number }> {
  const admin = new Kafka({ brokers: cluster.brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    // A broker may not have heard of a topic created a moment ago: ask again.
    let topics: Awaited<ReturnType<typeof admin.fetchTopicMetadata>>['topics'] = [];
    for (let attempt = 0; ; attempt++) {
      try {
        ({ topics } = await admin.fetchTopicMetadata({ topics: ['__consumer_offsets', topic] }));
        break;
      } catch (err) {
        if (attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    const offsets = topics.find((t) => t.name === '__consumer_offsets')?.partitions ?? [];
    const slot = (javaHash(groupId) & 0x7fffffff) % offsets.length;
    const coordinator = offsets.find((p) => p.partitionId === slot)?.leader;
    const partitions = topics.find((t) => t.name === topic)?.partitions ?? [];
    if (coordinator === undefined || partitions.length === 0) throw new Error('no leaders in metadata');
    const leads = new Map<number, number>();
    for (const p of partitions) leads.set(p.leader, (leads.get(p.leader) ?? 0) + 1);
    return { coordinator, leads, replicas: Math.min(...partitions.map((p) => p.replicas.length)) };
  } finally {
    await admin.disconnect();
  }
}

async function until(pred: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function ledgerRows(db: TestDatabase): Promise<number> {
  const rows = await query<{ n: number }>(db.writerUrl, db.schema, 'select count(*)::int as n from ledger');
  return rows[0]?.n ?? 0;
}

const history = (seed: number): VaultRecord[] => createHistoryGenerator({ vaults: 150, seed }).take(RECORDS);

describe('broker SIGKILL mid-publish (kafkajs patched: tulios/kafkajs#1303)', () => {
  const records = history(17);
  // The clean run's projection folds while the kill runs publish (wall time: two cores).
  let cleanRun: Promise<Awaited<ReturnType<typeof project>>>;

  beforeAll(async () => {
    const topic = uniqueTopic('clean');
    const client = { brokers: cluster.brokers, clientId: 'cluster-test' };
    await createTopic(client, topic);
    const publisher = await createPublisher({ ...client, topic });
    await publisher.publish(records);
    await publisher.close();
    cleanRun = project(topic, 'clean');
    cleanRun.catch(() => {});
  }, 240_000);

  it(`loses no acknowledged record in ${KILL_RUNS} runs of 20,000 (each broker killed once): topic and projection equal a clean run`, async () => {
    const report: {
      run: number;
      victim: number;
      acknowledged: number;
      missing: number;
      duplicates: number;
      error: string | null;
      ms: number;
    }[] = [];
    const projections: Promise<Awaited<ReturnType<typeof project>>>[] = [];
    for (let run = 0; run < KILL_RUNS; run++) {
      const t0 = Date.now();
      const topic = uniqueTopic(`kill${run}`);
      const client = { brokers: cluster.brokers, clientId: 'cluster-test' };
      await createTopic(client, topic);
      const victim = (run % 3) + 1;
      const publisher = await createPublisher({ ...client, topic });
      // Digests of the records whose publish resolved: what the indexer would checkpoint past.
      const acknowledged: string[] = [];
      let error: string | null = null;
      for (let start = 0; start < RECORDS && !error; start += BATCH) {
        const batch = records.slice(start, start + BATCH);
        const sending = publisher.publish(batch);
        // After 6,000 acknowledged records, kill a broker while the next batch is in flight.
        if (start === 6_000) setTimeout(() => cluster.kill(victim), run * 5);
        try {
          await sending;
          for (const r of batch) acknowledged.push(digest(encodeBinaryRecord(r)));
        } catch (err) {
          error = (err as Error).message;
        }
      }
      await publisher.close().catch(() => {});
      // The victim comes back while the survivors serve the reads.
      const restarted = cluster.restart(victim);
      const { values, total } = await readTopic(client, topic);
      const missing = acknowledged.filter((d) => !values.has(d)).length;
      // Folded while the next run publishes; compared at the end.
      const projection = project(topic, `kill${run}`);
      projection.catch(() => {});
      projections.push(projection);
      await restarted;
      report.push({
        run,
        victim,
        acknowledged: acknowledged.length,
        missing,
        duplicates: total - values.size,
        error,
        ms: Date.now() - t0,
      });
    }
    console.log(`[cluster] kill runs: ${JSON.stringify(report)}`);
    expect(report.map((r) => r.missing)).toEqual(Array(KILL_RUNS).fill(0));
    expect(report.map((r) => r.error)).toEqual(Array(KILL_RUNS).fill(null));
    expect(report.map((r) => r.acknowledged)).toEqual(Array(KILL_RUNS).fill(RECORDS));
    const clean = await cleanRun;
    // Sequenced marks have no ledger rows.
    expect(clean.ledger?.rows).toBe(records.filter((r) => r.type !== 'mark').length);
    for (const [run, p] of (await Promise.all(projections)).entries()) expect(p, `run ${run}`).toEqual(clean);
  }, 900_000);

  it('a projector keeps folding through a partition leader and group coordinator failover', async () => {
    const topic = uniqueTopic('failover');
    const client = { brokers: cluster.brokers, clientId: 'cluster-test' };
    await createTopic(client, topic);
    const publisher = await createPublisher({ ...client, topic });
    await publisher.publish(records.slice(0, 10_000));
    const db = await createTestDatabase('failover');
    dbs.push(db);
    const p = projector({
      brokers: cluster.brokers,
      url: db.writerUrl,
      schema: db.schema,
      topic,
      group: 'failover',
    });
    await p.start();
    // Kill the group's coordinator (the leader of the group's __consumer_offsets partition), which
    // also leads some of the topic's partitions, while the projector folds: one node, so the
    // survivors still make min.insync.replicas=2.
    const { coordinator, leads, replicas } = await leaders(`failover.${topic}`, topic);
    expect(replicas, 'replication factor the log admin chose on 3 brokers').toBe(3);
    expect(leads.get(coordinator) ?? 0, 'partitions the victim leads').toBeGreaterThan(0);
    try {
      await until(async () => (await ledgerRows(db)) > 0);
      cluster.kill(coordinator);
      await publisher.publish(records.slice(10_000));
      await publisher.close();
      await p.caughtUp({ timeoutMs: 180_000 });
      await p.stop();
    } finally {
      await cluster.restart(coordinator);
    }
    expect(await checksums(db.writerUrl, db.schema, VAULT_TABLES)).toEqual(await cleanRun);
  }, 300_000);
});

describe('the pipeline over SASL and over TLS', () => {
  const records = history(29).slice(0, 3_000);
  // What an operator sets, validated by the projector's own config schema.
  const securities = (): [string, string[], Env][] => {
    const sasl = (m: string) => ({
      KAFKA_SASL_MECHANISM: m,
      KAFKA_SASL_USERNAME: cluster.user.username,
      KAFKA_SASL_PASSWORD: cluster.user.password,
    });
    return [
      ['SCRAM-SHA-512', cluster.saslBrokers, sasl('SCRAM-SHA-512')],
      ['SCRAM-SHA-256', cluster.saslBrokers, sasl('SCRAM-SHA-256')],
      // PLAIN without TLS only where the operator says so (a local test listener).
      ['PLAIN', cluster.saslBrokers, { ...sasl('PLAIN'), KAFKA_SASL_ALLOW_PLAINTEXT: 'true' }],
      ['TLS', cluster.sslBrokers, { KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: cluster.caFile }],
    ];
  };

  /**
   * The records published over `brokers` with `security` into a topic of their own, and projected
   * from it into a fresh database with the same settings: the topic, the client and the tables'
   * checksums (every record's ledger row checked there).
   */
  const publishAndProject = async (
    name: string,
    brokers: string[],
    security: ReturnType<typeof kafkaSecurity>,
  ) => {
    const topic = uniqueTopic(`sec-${name.toLowerCase()}`);
    const client = { brokers, clientId: 'cluster-test', ...security };
    await createTopic(client, topic);
    const publisher = await createPublisher({ ...client, topic });
    await publisher.publish(records);
    await publisher.close();
    const db = await createTestDatabase(`sec-${name}`);
    dbs.push(db);
    const p = projector({
      brokers,
      url: db.writerUrl,
      schema: db.schema,
      topic,
      group: 'sec',
      kafka: { security },
      migrate: false,
    });
    await p.start();
    await p.caughtUp({ timeoutMs: 120_000 });
    await p.stop();
    const sums = await checksums(db.writerUrl, db.schema, VAULT_TABLES);
    expect(sums.ledger?.rows, name).toBe(records.filter((r) => r.type !== 'mark').length);
    return { topic, client, sums };
  };

  it('the SASL password is new at each start, kept in a file only its owner reads', () => {
    expect(cluster.user.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(readFileSync(cluster.user.passwordFile, 'utf8')).toBe(`${cluster.user.password}\n`);
    expect(statSync(cluster.user.passwordFile).mode & 0o777).toBe(0o600);
  });

  it('publishes and projects over each listener; wrong credentials and an untrusted CA are refused', async () => {
    let reference: Awaited<ReturnType<typeof project>> | null = null;
    for (const [name, brokers, env] of securities()) {
      const config = loadProjectorEnv({
        KAFKA_BROKERS: brokers.join(','),
        DATABASE_URL: 'postgres://unused/x',
        ...env,
      });
      const { sums } = await publishAndProject(name, brokers, kafkaSecurity(config));
      reference ??= sums;
      expect(sums, name).toEqual(reference);
    }
    const wrong = { brokers: cluster.saslBrokers, clientId: 'cluster-test', retries: 0 };
    await expect(
      createLogAdmin({ ...wrong, sasl: { mechanism: 'scram-sha-512', username: 'vault', password: 'nope' } }),
    ).rejects.toThrow(/SASL SCRAM SHA512 authentication failed/i);
    await expect(
      createLogAdmin({ brokers: cluster.sslBrokers, clientId: 'cluster-test', retries: 0, ssl: true }),
    ).rejects.toThrow(/self[- ]signed certificate/i);
  }, 300_000);

  it('mutual TLS: with the client certificate the env names it publishes, reads back and projects; without one, or with one another CA signed, it is refused', async () => {
    const brokers = cluster.mtlsBrokers;
    // What an operator sets for brokers with ssl.client.auth=required, through the projector's config.
    const mtls = (env: Env) =>
      kafkaSecurity(
        loadProjectorEnv({
          KAFKA_BROKERS: brokers.join(','),
          DATABASE_URL: 'postgres://unused/x',
          KAFKA_SSL: 'true',
          KAFKA_SSL_CA_FILE: cluster.caFile,
          ...env,
        }),
      );
    const security = mtls({
      KAFKA_SSL_CERT_FILE: cluster.clientCertFile,
      KAFKA_SSL_KEY_FILE: cluster.clientKeyFile,
    });
    expect(security.ssl).toEqual({
      ca: [expect.stringContaining('BEGIN CERTIFICATE')],
      cert: expect.stringContaining('BEGIN CERTIFICATE'),
      key: expect.stringContaining('PRIVATE KEY'),
    });
    const { topic, client } = await publishAndProject('mtls', brokers, security);
    // Read back over the same listener: every record, once.
    const { values, total } = await readTopic(client, topic);
    expect(total).toBe(records.length);
    expect(values).toEqual(new Set(records.map((r) => digest(encodeBinaryRecord(r)))));

    // The same CA without a client certificate: taken on the SSL listener (client auth none), refused
    // in the handshake on MTLS, by the admin and by a producer alike.
    const noCert = mtls({});
    expect(noCert.ssl).toEqual({ ca: [expect.any(String)] });
    const probe = { clientId: 'cluster-test', retries: 0, ...noCert };
    const control = await createLogAdmin({ ...probe, brokers: cluster.sslBrokers });
    await control.close();
    await expect(createLogAdmin({ ...probe, brokers })).rejects.toThrow(/alert bad certificate/i);
    // (An idempotent producer needs a retry to be allowed: one.)
    await expect(createPublisher({ ...probe, retries: 1, brokers, topic })).rejects.toThrow(
      /alert bad certificate/i,
    );
    // A client certificate the brokers' client CA did not sign.
    const untrusted = mtls({
      KAFKA_SSL_CERT_FILE: cluster.untrustedClientCertFile,
      KAFKA_SSL_KEY_FILE: cluster.untrustedClientKeyFile,
    });
    await expect(
      createLogAdmin({ clientId: 'cluster-test', retries: 0, ...untrusted, brokers }),
    ).rejects.toThrow(/alert certificate unknown/i);
  }, 300_000);
});

describe('the indexer over SASL/SCRAM through a controller failover', () => {
  let anvil: AnvilInstance | undefined;
  afterAll(async () => {
    await anvil?.stop();
  });

  it('follows the head while the active KRaft controller is SIGKILLed; every record reaches the topic', async () => {
    anvil = await startAnvil();
    const stack = await deployReferenceStack(anvil.rpcUrl);
    const db = await createTestDatabase('cluster-indexer');
    dbs.push(db);
    const topic = uniqueTopic('indexer-sasl');
    // Every Kafka client says its own security (no process-wide default: the indexer's reaches
    // its own clients, the publisher thread included, and nothing else).
    const security = {
      sasl: {
        mechanism: 'scram-sha-512' as const,
        username: cluster.user.username,
        password: cluster.user.password,
      },
    };
    const indexer = createIndexer({
      rpcUrl: anvil.rpcUrl,
      factory: stack.factory,
      kafka: { brokers: cluster.saslBrokers, topic, partitions: 4, security },
      databaseUrl: db.writerUrl,
      schema: db.schema,
      pollIntervalMs: 50,
      maxBlockRange: 5,
      logger: silent,
    });
    await indexer.start();
    const controller = cluster.activeController();
    expect(controller).not.toBeNull();
    const playing = playDemoScenario(stack);
    cluster.kill(controller as number);
    const demo = await playing;
    await indexer.waitFor(Number(demo.toBlock));
    await indexer.stop();
    const successor = cluster.activeController();
    expect(successor).not.toBeNull();
    expect(successor).not.toBe(controller);

    const got = new Map(
      (await readIndexedTopic(cluster.saslBrokers, topic, security)).map((t) => [
        recordId(t.record),
        normalized(t.record),
      ]),
    );
    const expected = await expectedRecords(
      anvil.rpcUrl,
      anvil.chainId,
      stack.factory,
      Number(stack.deploymentBlock),
      Number(demo.toBlock),
    );
    expect(expected.length).toBeGreaterThan(0);
    for (const e of expected) expect(got.get(recordId(e)), recordId(e)).toBe(normalized(e));
    await cluster.restart(controller as number);
  }, 300_000);
});
