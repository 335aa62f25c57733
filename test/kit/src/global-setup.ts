import { ensureRoles } from '@vault-yield/devstack/postgres';
import type { TestProject } from 'vitest/node';
import { resolveKafka, resolvePostgres } from './resolve.js';

declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBrokers: string;
    kafkaDescription: string;
    postgresAdminUrl: string;
  }
}

/** Resolves Kafka and Postgres once for the whole run and hands their addresses to every file. */
export default async function setup(project: TestProject) {
  const [kafka, postgres] = await Promise.all([resolveKafka(), resolvePostgres()]);
  await ensureRoles(postgres.url);
  console.log(`[harness] kafka: ${kafka.description} (${kafka.source})`);
  console.log(`[harness] postgres: ${postgres.description} (${postgres.source})`);
  project.provide('kafkaBrokers', kafka.url);
  project.provide('kafkaDescription', kafka.description);
  project.provide('postgresAdminUrl', postgres.url);
  return async () => {
    await Promise.all([kafka.stop(), postgres.stop()]);
  };
}
