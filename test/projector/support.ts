import { createLogger } from '@vault-yield/common';
import type { RecordEncoding, VaultRecord } from '@vault-yield/domain';
import { createLogAdmin, createPublisher, type RawMessage } from '@vault-yield/log';
import { createProjector, type Projector, type ProjectorConfig } from '@vault-yield/projector';
import { createPgPool } from '@vault-yield/store';

export const PARTITIONS = 4;

const created: { brokers: string[]; topic: string }[] = [];

export async function createTopic(brokers: string[], topic: string, partitions = PARTITIONS): Promise<void> {
  const admin = await createLogAdmin({ brokers, clientId: 'test-admin' });
  try {
    await admin.ensureTopic({ topic, partitions });
    created.push({ brokers, topic });
  } finally {
    await admin.close();
  }
}

/** Deletes the topics this file created (call in afterAll). */
export async function deleteTopics(): Promise<void> {
  for (const { brokers, topic } of created.splice(0)) {
    const admin = await createLogAdmin({ brokers, clientId: 'test-admin' });
    await admin.deleteTopic(topic).catch(() => {});
    await admin.close();
  }
}

export async function publish(
  brokers: string[],
  topic: string,
  records: readonly VaultRecord[],
  raw: readonly RawMessage[] = [],
  encoding?: RecordEncoding,
): Promise<void> {
  const publisher = await createPublisher({ brokers, clientId: 'test-publisher', topic, encoding });
  try {
    await publisher.publish(records);
    if (raw.length > 0) await publisher.publishRaw(raw);
  } finally {
    await publisher.close();
  }
}

const silent = createLogger({ name: 'projector-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });

/**
 * An in-process projector on a test database. Its Kafka group is named after the topic too: test
 * files run side by side on one broker, and two files' projectors with the same CONSUMER_GROUP
 * (e.g. `live`) would otherwise share one Kafka group and be handed each other's partitions
 * (kafkajs assigns every subscribed topic over every member). Instances of one test (same group,
 * same topic) still share theirs.
 */
export function projector(
  opts: {
    brokers: string[];
    url: string;
    schema: string;
    topic: string;
    group: string;
    /** Kafka settings beyond the above (security). */
    kafka?: Partial<ProjectorConfig['kafka']>;
  } & Partial<Omit<ProjectorConfig, 'kafka'>>,
): Projector {
  const { brokers, url, schema, topic, group, kafka, ...rest } = opts;
  return createProjector({
    kafka: {
      brokers,
      topic,
      consumerGroup: group,
      groupId: `${group}.${topic}`,
      sessionTimeoutMs: 6_000,
      ...kafka,
    },
    databaseUrl: url,
    schema,
    logger: silent,
    ...rest,
  });
}

/**
 * Columns compared per table: everything but wall-clock and sequence-generated columns. Rows are
 * ordered by their vault's chain and address (a vault is both: the same address may be on two chains).
 */
const TABLES: Record<string, { cols: string; order: string }> = {
  // last_seq is a position in the log, not a figure: after a reorg it stands above a straight
  // run's (reverts take numbers). Held vaults are compared through `held` and the dead letters.
  // log_topic / log_partition (migration 0024) say where the vault's records were read from.
  vault_snapshot: {
    cols: `chain_id, vault, to_jsonb(vault_snapshot) - 'last_seq' - 'log_topic' - 'log_partition' as r`,
    order: 'chain_id, vault',
  },
  positions: { cols: '*', order: 'chain_id, vault, position_id' },
  equity_points: { cols: '*', order: 'chain_id, vault, seq' },
  // commit_xid (migration 0021): which transaction wrote the row, differs by run.
  ledger: {
    cols: `vault, chain_id, block_hash, tx_hash, log_index, to_jsonb(ledger) - 'commit_xid' as r`,
    order: 'vault, chain_id, block_hash, tx_hash, log_index',
  },
  dead_letters: {
    cols: 'topic, partition, "offset", key, value, reason, chain_id',
    order: 'topic, partition, "offset"',
  },
  consumer_offsets: { cols: 'topic, partition, next_offset', order: 'topic, partition' },
  // live_apr / sigma / history_days are functions of the log (equity points and fold extents):
  // compared. updated_at is the wall clock of the write.
  strategies: { cols: `id, to_jsonb(strategies) - 'updated_at' as r`, order: 'id' },
};

export type Checksums = Record<string, { rows: number; md5: string }>;

/** md5 of each table's rows in a fixed order: two projections are equal iff these are. */
export async function checksums(
  url: string,
  schema: string,
  tables = Object.keys(TABLES),
): Promise<Checksums> {
  const pool = createPgPool({ url, schema, applicationName: 'test-checksums', max: 1 });
  try {
    const out: Checksums = {};
    for (const table of tables) {
      const spec = TABLES[table];
      if (!spec) throw new Error(`no checksum spec for ${table}`);
      const { rows } = await pool.query<{ n: number; md5: string | null }>(
        `select count(*)::int as n, md5(coalesce(string_agg(t::text, E'\\n' order by ${spec.order}), '')) as md5
         from (select ${spec.cols} from ${table}) t`,
      );
      out[table] = { rows: rows[0]?.n ?? 0, md5: rows[0]?.md5 ?? '' };
    }
    return out;
  } finally {
    await pool.end();
  }
}

export const VAULT_TABLES = ['vault_snapshot', 'positions', 'equity_points', 'ledger'];

export async function query<T extends Record<string, unknown>>(
  url: string,
  schema: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const pool = createPgPool({ url, schema, applicationName: 'test-query', max: 1 });
  try {
    return (await pool.query<T>(sql, params)).rows;
  } finally {
    await pool.end();
  }
}
