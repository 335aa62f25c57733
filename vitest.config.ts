import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/**/*.test.ts', 'services/**/*.test.ts', 'infra/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'infra/kafka/lib/**'],
    globalSetup: ['test/harness/global-setup.ts'],
    // Files spawn processes (brokers, chains, workers): forks isolate them; two cores, two files at once.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
