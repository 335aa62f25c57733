import { readFileSync } from 'node:fs';
import { indexerEnvSchema } from '@vault-yield/indexer';
import { projectorConfigSchema } from '@vault-yield/projector';
import { readerEnvSchema } from '@vault-yield/reader';
import { describe, expect, it } from 'vitest';
import { migrateConfigSchema } from '../services/cli/src/commands/migrate.js';

/**
 * docker-compose.yml cannot run on machines without Docker, so this keeps it honest: every
 * environment variable it gives a service is one that service's zod config reads.
 */
function composeEnvironments(text: string): Map<string, string[]> {
  const lines = text.split('\n');
  const anchors = new Map<string, string[]>();
  const services = new Map<string, string[]>();
  let service: string | null = null;
  let anchor: string | null = null;
  let inEnv = false;
  for (const line of lines) {
    const top = /^([a-zA-Z][\w.-]*):/.exec(line);
    const anchorDef = /^x-[\w-]+: &([\w-]+)/.exec(line);
    if (anchorDef) {
      anchor = anchorDef[1]!;
      anchors.set(anchor, []);
      service = null;
      inEnv = true;
      continue;
    }
    if (top) {
      anchor = null;
      inEnv = false;
      continue;
    }
    const svc = /^ {2}([\w-]+):\s*$/.exec(line);
    if (svc && !anchor) {
      service = svc[1]!;
      services.set(service, []);
      inEnv = false;
      continue;
    }
    if (/^ {4}environment:\s*$/.test(line)) {
      inEnv = true;
      continue;
    }
    if (/^ {4}\w/.test(line) && !/^ {4}environment:/.test(line) && !anchor) inEnv = false;
    const merge = /^ {6}<<: \*([\w-]+)/.exec(line);
    if (inEnv && service && merge) services.get(service)!.push(...(anchors.get(merge[1]!) ?? []));
    const key = /^ {2,6}([A-Z][A-Z0-9_]*):/.exec(line);
    if (inEnv && key) (anchor ? anchors.get(anchor)! : services.get(service!)!).push(key[1]!);
  }
  return services;
}

describe('docker-compose.yml', () => {
  const envs = composeEnvironments(readFileSync(new URL('../docker-compose.yml', import.meta.url), 'utf8'));
  const readBy = {
    indexer: indexerEnvSchema,
    projector: projectorConfigSchema,
    reader: readerEnvSchema,
    migrate: migrateConfigSchema,
  } as const;

  for (const [service, schema] of Object.entries(readBy)) {
    it(`gives ${service} only variables its config reads, and every required one`, () => {
      const given = envs.get(service);
      expect(given, `service ${service} in docker-compose.yml`).toBeDefined();
      const known = Object.keys(schema.shape);
      for (const key of given!) expect(known, `${service} reads ${key}`).toContain(key);
      // Every variable without a default must be given.
      const required = known.filter(
        (k) => !schema.shape[k as keyof typeof schema.shape].safeParse(undefined).success,
      );
      for (const key of required) expect(given, `${service} needs ${key}`).toContain(key);
    });
  }
});
