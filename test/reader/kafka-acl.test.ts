import { join } from 'node:path';
import type { KafkaSecurity } from '@vault-yield/common';
import { createLogger } from '@vault-yield/common';
import { type LocalCluster, startLocalKafkaCluster } from '@vault-yield/devstack/kafka';
import { createLogAdmin, createPublisher } from '@vault-yield/log';
import { createReader, type Reader, readerConfig } from '@vault-yield/reader';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { type AclEntry, Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projector } from '../projector/support.js';

/**
 * The reader needs no right to the log but to describe it (issue #42 item 9): with ACLs enforced
 * (one KRaft broker, StandardAuthorizer, SASL/SCRAM users), the ACLs of README's production guide
 * are enough — the indexer's principal creates the topic and publishes, the projector's folds it,
 * the reader's (DESCRIBE on the topics alone) gives `/ready` its records of lag — and the reader's
 * principal cannot publish (TOPIC_AUTHORIZATION_FAILED), read a group's offsets or delete the
 * topic; a principal without ACLs gets no lag at all. Real broker, reader, projector, Postgres.
 */

// Below the ephemeral range (see infra/kafka/cluster.ts); the 3-node cluster tests use 31700–31724.
const BASE_PORT = Number(process.env.ACL_KAFKA_PORT ?? 31750);
const TOKEN = 'kafka-acl-test-admin-token';
const silent = createLogger({ name: 'kafka-acl-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const TOPIC = 'vault-records';
const GROUP = 'vault-yield-projector';

// kafkajs' ACL enums, by value (a CommonJS export Node's ESM loader cannot name).
const [TOPIC_RESOURCE, GROUP_RESOURCE] = [2, 3];
const [READ, WRITE, CREATE, DESCRIBE, DESCRIBE_CONFIGS] = [3, 4, 5, 8, 10];
const [ALLOW, PREFIXED] = [3, 4];

/**
 * The ACLs of README's production guide (kafka-acls.sh … --resource-pattern-type prefixed): every
 * topic and group whose name starts with the log's (a reindex writes a new topic beside it).
 */
const GUIDE: Record<
  'reader' | 'indexer' | 'projector',
  [resource: number, name: string, operation: number][]
> = {
  reader: [[TOPIC_RESOURCE, TOPIC, DESCRIBE]],
  indexer: [
    [TOPIC_RESOURCE, TOPIC, CREATE],
    [TOPIC_RESOURCE, TOPIC, DESCRIBE_CONFIGS],
    [TOPIC_RESOURCE, TOPIC, WRITE],
  ],
  projector: [
    [TOPIC_RESOURCE, TOPIC, READ],
    [GROUP_RESOURCE, GROUP, READ],
  ],
};

describe('the reader on a read-only Kafka principal (ACLs enforced)', () => {
  let cluster: LocalCluster;
  let db: TestDatabase;
  let brokers: string[];
  const gen = createHistoryGenerator({ vaults: 4, seed: 97 });
  const as = (name: string): KafkaSecurity => ({
    sasl: { mechanism: 'scram-sha-512', username: name, password: cluster.principals[name]!.password },
  });
  const raw = (name: string) =>
    new Kafka({
      clientId: `acl-test-${name}`,
      brokers,
      sasl: { mechanism: 'scram-sha-512', username: name, password: cluster.principals[name]!.password },
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
    });
  const publish = async (security: KafkaSecurity, n: number) => {
    const publisher = await createPublisher({
      brokers,
      clientId: 'acl-test-indexer',
      topic: TOPIC,
      ...security,
    });
    try {
      await publisher.publish(gen.take(n));
    } finally {
      await publisher.close();
    }
  };

  beforeAll(async () => {
    const dataDir = join(import.meta.dirname, '..', '..', 'infra', 'kafka', '.data', `acl-${BASE_PORT}`);
    [cluster, db] = await Promise.all([
      startLocalKafkaCluster({
        basePort: BASE_PORT,
        dataDir,
        nodes: 1,
        heapMiB: 384,
        authorizer: { principals: ['reader', 'indexer', 'projector', 'stranger'] },
      }),
      createTestDatabase('kafka_acl'),
    ]);
    brokers = cluster.saslBrokers;
    // The operator's ACLs, made by a super user (the PLAINTEXT listener's ANONYMOUS here).
    const admin = new Kafka({
      clientId: 'acl-test-admin',
      brokers: cluster.brokers,
      logLevel: logLevel.NOTHING,
    }).admin();
    await admin.connect();
    try {
      const acl: AclEntry[] = Object.entries(GUIDE).flatMap(([who, grants]) =>
        grants.map(([resourceType, resourceName, operation]) => ({
          principal: `User:${who}`,
          host: '*',
          resourceType,
          resourceName,
          resourcePatternType: PREFIXED,
          operation,
          permissionType: ALLOW,
        })),
      );
      await admin.createAcls({ acl });
    } finally {
      await admin.disconnect();
    }
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    await db?.drop();
  });

  it("the guide's ACLs: the indexer creates and publishes, the projector folds, the reader reads the lag and nothing more", async () => {
    // The indexer's principal: ensureTopic (CREATE, DESCRIBE_CONFIGS) and the idempotent publisher (WRITE).
    const indexerAdmin = await createLogAdmin({ brokers, clientId: 'acl-test-indexer', ...as('indexer') });
    try {
      expect(await indexerAdmin.ensureTopic({ topic: TOPIC, partitions: 3, replicationFactor: 1 })).toBe(
        true,
      );
    } finally {
      await indexerAdmin.close();
    }
    await publish(as('indexer'), 40);

    // The projector's principal folds it all (READ on the topic and its group).
    const proj = projector({
      brokers,
      url: db.writerUrl,
      schema: db.schema,
      topic: TOPIC,
      group: GROUP,
      kafka: { groupId: GROUP, security: as('projector') },
    });
    await proj.start();
    try {
      await proj.caughtUp({ timeoutMs: 60_000 });
    } finally {
      await proj.stop();
    }
    await publish(as('indexer'), 25);

    const lagAs = async (name: string) => {
      const reader: Reader = createReader(
        readerConfig(db.readerUrl, {
          schema: db.schema,
          port: 0,
          host: '127.0.0.1',
          adminToken: TOKEN,
          freshness: {
            kafka: { brokers, topic: TOPIC, security: as(name) },
            indexerSchema: db.schema,
            maxLagRecords: 0,
            maxLagSeconds: 0,
          },
          logger: silent,
        }),
      );
      const { url } = await reader.start();
      try {
        const res = await fetch(`${url}/ready`, { headers: { authorization: `Bearer ${TOKEN}` } });
        const body = (await res.json()) as { lag?: { records: number | null } };
        const metrics = await (
          await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
        ).text();
        return {
          status: res.status,
          records: body.lag?.records,
          gauge: /^reader_projection_lag_records (\S+)$/m.exec(metrics)?.[1],
        };
      } finally {
        await reader.stop();
      }
    };
    // The reader's principal (DESCRIBE alone): the 25 records the projection has not folded.
    expect(await lagAs('reader')).toEqual({ status: 200, records: 25, gauge: '25' });
    // A principal without ACLs: the topic's offsets are refused, the records of lag unknown.
    expect(await lagAs('stranger')).toMatchObject({ status: 200, records: null });

    // The reader's principal cannot write the log: a producer's send is refused by the topic's ACL…
    const producer = raw('reader').producer();
    await producer.connect();
    try {
      await expect(
        producer.send({ topic: TOPIC, messages: [{ key: 'k', value: 'forged' }] }),
      ).rejects.toMatchObject({
        type: 'TOPIC_AUTHORIZATION_FAILED',
      });
    } finally {
      await producer.disconnect();
    }
    // …the services' idempotent publisher is refused before a record is sent…
    await expect(publish(as('reader'), 1)).rejects.toThrow(/authoriz/i);
    // …nor read a group's offsets (the projector's principal may: READ on the group), nor delete
    // the topic.
    const offsetsAs = async (name: string) => {
      const admin = raw(name).admin();
      await admin.connect();
      try {
        // (the brokers' metadata first: kafkajs looks the group's coordinator up among them)
        await admin.fetchTopicMetadata({ topics: [TOPIC] });
        const [entry] = await admin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
        return entry?.partitions.length;
      } finally {
        await admin.disconnect();
      }
    };
    expect(await offsetsAs('projector')).toBe(3);
    // (The broker answers the coordinator lookup GROUP_AUTHORIZATION_FAILED; kafkajs, asking every
    // broker in turn, reports it as no coordinator found.)
    await expect(offsetsAs('reader')).rejects.toMatchObject({ name: 'KafkaJSGroupCoordinatorNotFound' });
    const readerAdmin = raw('reader').admin();
    await readerAdmin.connect();
    try {
      await expect(readerAdmin.deleteTopics({ topics: [TOPIC], timeout: 5_000 })).rejects.toMatchObject({
        type: 'TOPIC_AUTHORIZATION_FAILED',
      });
    } finally {
      await readerAdmin.disconnect();
    }
    // Nothing the reader's principal tried reached the log: 65 records, as the indexer published.
    const check = raw('reader').admin();
    await check.connect();
    try {
      const offsets = await check.fetchTopicOffsets(TOPIC);
      expect(offsets.reduce((n, p) => n + Number(p.high), 0)).toBe(65);
    } finally {
      await check.disconnect();
    }
  }, 120_000);
});
