import { defineConfig } from 'vitest/config';

const workspaces = ['packages', 'services', 'infra', 'test/kit'];

/**
 * Two kinds of test (`npm test` runs both):
 * - unit: pure logic beside its code (`*.test.ts`): no Postgres, Kafka or chain, seconds in all
 *   (`npm run test:unit`);
 * - int: what needs real services — colocated `*.int.test.ts` and every cross-service test under
 *   test/ — with the global setup that finds or starts Postgres and the broker.
 */
export default defineConfig({
  test: {
    // Files spawn processes (brokers, chains, workers): forks isolate them; two cores, two files at once.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: workspaces.map((w) => `${w}/**/*.test.ts`),
          exclude: ['**/node_modules/**', '**/*.int.test.ts', 'infra/kafka/lib/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'int',
          include: [...workspaces.map((w) => `${w}/**/*.int.test.ts`), 'test/**/*.test.ts'],
          exclude: ['**/node_modules/**', 'infra/kafka/lib/**', 'test/kit/**/!(*.int).test.ts'],
          globalSetup: ['test/kit/src/global-setup.ts'],
        },
      },
    ],
  },
});
