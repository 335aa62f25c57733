import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Logger } from '@vault-yield/common';
import { jarVersion, libDir, startLocalKafka, stopLocalKafka } from '@vault-yield/devstack/kafka';
import { ensureProjectDatabase, ROLES, redact } from '@vault-yield/devstack/postgres';

const pom = fileURLToPath(new URL('../../../../infra/kafka/pom.xml', import.meta.url));

/** Something `dev` started and must stop on the way out. */
export type Stop = () => Promise<void>;

/** Kafka from KAFKA_BROKERS, else the local KRaft runner (fetching its jars on first use). */
export async function ensureKafka(
  log: Logger,
  brokers: readonly string[] | undefined,
): Promise<{ brokers: string[]; stop: Stop }> {
  if (brokers) return { brokers: [...brokers], stop: async () => {} };
  if (!jarVersion()) await fetchKafkaJars(log);
  const kafka = await startLocalKafka();
  log.info({ brokers: kafka.brokers, version: kafka.version, started: kafka.started }, 'kafka ready');
  return {
    brokers: kafka.brokers,
    stop: kafka.started ? async () => void (await stopLocalKafka()) : async () => {},
  };
}

/**
 * The first run's Maven fetch of the Kafka jars (≈ 60 MB from Maven Central): a line when it
 * starts, one every 5 s with the jars fetched so far, one when done — not a silent minute.
 */
async function fetchKafkaJars(log: Logger): Promise<void> {
  log.info('fetching the Kafka jars from Maven Central (first run only, about a minute)');
  const started = Date.now();
  const jars = () => (existsSync(libDir) ? readdirSync(libDir).filter((f) => f.endsWith('.jar')).length : 0);
  const timer = setInterval(
    () =>
      log.info(
        { jars: jars(), seconds: Math.round((Date.now() - started) / 1000) },
        'still fetching the Kafka jars',
      ),
    5_000,
  );
  try {
    await new Promise<void>((resolve, reject) => {
      const mvn = spawn('mvn', ['-q', '-f', pom, 'dependency:copy-dependencies'], { stdio: 'inherit' });
      mvn.on('error', reject);
      mvn.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`mvn exited with ${code}`))));
    });
  } finally {
    clearInterval(timer);
  }
  log.info({ jars: jars(), seconds: Math.round((Date.now() - started) / 1000) }, 'Kafka jars fetched');
}

/**
 * The project database with its roles, on DATABASE_ADMIN_URL or the machine's cluster, laid out
 * as deployed: the migrator owns it (DDL), the writer has DML only, the reader reads.
 */
export async function ensureDatabase(log: Logger, settings: { adminUrl: string; name: string }) {
  const db = await ensureProjectDatabase(settings.adminUrl, settings.name, { split: true });
  log.info(
    { migrator: redact(db.migratorUrl), writer: redact(db.writerUrl), reader: redact(db.readerUrl) },
    'postgres ready',
  );
  return { ...db, readerRole: ROLES.reader, writerRole: ROLES.writer };
}
