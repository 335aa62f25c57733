import { jarVersion, kafkaAnswers, startLocalKafka } from '@vault-yield/devstack/kafka';
import { ensurePostgres, redact } from '@vault-yield/devstack/postgres';

/** Where the tests' Kafka came from, and how to undo it. */
export interface ResolvedService {
  url: string;
  source: 'env' | 'testcontainers' | 'local';
  /** Human description for the test log, e.g. the broker version. */
  description: string;
  stop: () => Promise<void>;
}

const LOCAL_PG = 'postgres://postgres@127.0.0.1:5432/postgres';
const noop = async () => {};

/** True when a Docker (or compatible) engine answers; testcontainers throws when there is none. */
async function containerRuntime(): Promise<boolean> {
  if (process.env.TESTCONTAINERS_DISABLED === 'true') return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

/**
 * Kafka for tests, in order: KAFKA_BROKERS → testcontainers (Docker) → the local KRaft runner.
 * Fails with what is missing and how to get it; never skips.
 */
export async function resolveKafka(env: NodeJS.ProcessEnv = process.env): Promise<ResolvedService> {
  if (env.KAFKA_BROKERS) {
    const brokers = env.KAFKA_BROKERS.split(',').map((b) => b.trim());
    if (!(await kafkaAnswers(brokers, 5000))) {
      throw new Error(
        `Kafka is unreachable at KAFKA_BROKERS=${env.KAFKA_BROKERS}: no broker answered a metadata request. ` +
          'Start one there, or unset KAFKA_BROKERS to let the tests start the local broker ' +
          '(needs Java 17 and `npm run kafka:fetch`), or run with a Docker engine for testcontainers.',
      );
    }
    return {
      url: brokers.join(','),
      source: 'env',
      description: `external broker ${brokers.join(',')}`,
      stop: noop,
    };
  }
  if (await containerRuntime()) {
    const { KafkaContainer } = await import('@testcontainers/kafka');
    const container = await new KafkaContainer('confluentinc/cp-kafka:7.9.0').withKraft().start();
    const url = `${container.getHost()}:${container.getMappedPort(9093)}`;
    return {
      url,
      source: 'testcontainers',
      description: 'cp-kafka 7.9.0 (Kafka 3.9) in a container',
      stop: async () => void (await container.stop()),
    };
  }
  if (!jarVersion()) {
    throw new Error(
      'No Kafka for the tests: KAFKA_BROKERS is unset, no Docker engine answers for testcontainers, and the ' +
        'local runner has no jars. Run `npm run kafka:fetch` (Maven + Java 17), or set KAFKA_BROKERS.',
    );
  }
  const local = await startLocalKafka();
  return {
    url: local.brokers.join(','),
    source: 'local',
    description: `Apache Kafka ${local.version} (KRaft, local runner, pid ${local.pid})`,
    stop:
      local.started && env.KEEP_KAFKA !== 'true'
        ? async () => void (await import('@vault-yield/devstack/kafka')).stopLocalKafka()
        : noop,
  };
}

/**
 * Postgres for tests (an admin URL that may create databases and roles), in order:
 * DATABASE_URL → testcontainers → the machine's cluster on 127.0.0.1:5432.
 */
export async function resolvePostgres(env: NodeJS.ProcessEnv = process.env): Promise<ResolvedService> {
  if (env.DATABASE_URL) {
    await ensurePostgres(env.DATABASE_URL);
    return { url: env.DATABASE_URL, source: 'env', description: redact(env.DATABASE_URL), stop: noop };
  }
  if (await containerRuntime()) {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await new PostgreSqlContainer('postgres:15').start();
    return {
      url: container.getConnectionUri(),
      source: 'testcontainers',
      description: 'postgres:15 in a container',
      stop: async () => void (await container.stop()),
    };
  }
  await ensurePostgres(LOCAL_PG);
  return { url: LOCAL_PG, source: 'local', description: `local cluster ${LOCAL_PG}`, stop: noop };
}
