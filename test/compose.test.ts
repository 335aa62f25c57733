import { accessSync, constants, readFileSync } from 'node:fs';
import { auditEnvSchema, migrateConfigSchema, webhooksEnvSchema } from '@vault-yield/cli/config';
import { ROLES } from '@vault-yield/devstack/postgres';
import { indexerEnvSchema } from '@vault-yield/indexer';
import { projectorEnvSchema } from '@vault-yield/projector';
import { readerEnvSchema } from '@vault-yield/reader';
import { describe, expect, it } from 'vitest';

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
    projector: projectorEnvSchema,
    reader: readerEnvSchema,
    migrate: migrateConfigSchema,
    webhooks: webhooksEnvSchema,
    audit: auditEnvSchema,
  } as const;

  for (const [service, schema] of Object.entries(readBy)) {
    it(`gives ${service} only variables its config (or Node itself) reads, and every required one`, () => {
      const given = envs.get(service);
      expect(given, `service ${service} in docker-compose.yml`).toBeDefined();
      const known = Object.keys(schema.shape);
      // NODE_OPTIONS is read by Node at start (heap sizes), never by the service's config.
      for (const key of given!)
        if (key !== 'NODE_OPTIONS') expect(known, `${service} reads ${key}`).toContain(key);
      // Every variable without a default must be given.
      const required = known.filter(
        (k) => !schema.shape[k as keyof typeof schema.shape].safeParse(undefined).success,
      );
      for (const key of required) expect(given, `${service} needs ${key}`).toContain(key);
    });
  }

  /** Each service's block of lines (two-space service names under `services:`). */
  const text = readFileSync(new URL('../docker-compose.yml', import.meta.url), 'utf8');
  const blocks = new Map<string, string>();
  {
    const body = text.slice(text.indexOf('\nservices:\n'), text.indexOf('\nvolumes:\n'));
    for (const m of body.matchAll(/^ {2}([\w-]+):\n((?: {4}.*\n|\s*\n)*)/gm)) blocks.set(m[1]!, m[2]!);
  }
  const urlUser = (service: string) =>
    /DATABASE_URL: postgres:\/\/([^:@]+)/.exec(blocks.get(service) ?? '')?.[1];

  it("publishes only the reader's port", () => {
    expect([...blocks.keys()]).toEqual(expect.arrayContaining(['postgres', 'kafka', 'chain', 'reader']));
    const published = [...blocks].filter(([, b]) => /^ {4}ports:/m.test(b)).map(([name]) => name);
    expect(published).toEqual(['reader']);
  });

  it('runs DDL as the migrator, the workers as the DML-only writer, the reader read-only, never the superuser', () => {
    expect(urlUser('reader')).toBe(ROLES.reader);
    for (const service of ['migrate', 'views']) {
      expect(urlUser(service), service).toBe(ROLES.migrator);
      // The migrator grants: the reader its SELECT, the writer its DML (and which schema is live).
      expect(blocks.get(service), service).toContain(`READER_ROLE: ${ROLES.reader}`);
      expect(blocks.get(service), service).toContain(`WRITER_ROLE: ${ROLES.writer}`);
    }
    for (const service of ['indexer', 'projector']) expect(urlUser(service), service).toBe(ROLES.writer);
    // The deliverer as the one role, with the migrator, granted the webhook tables (their secrets).
    expect(urlUser('webhooks')).toBe(ROLES.webhooks);
    // Every service that connects is one of the above.
    const connecting = [...blocks].filter(([, b]) => /DATABASE_URL:/.test(b)).map(([name]) => name);
    expect(connecting.sort()).toEqual(['indexer', 'migrate', 'projector', 'reader', 'views', 'webhooks']);
    expect(text).not.toMatch(/postgres:\/\/postgres[:@]/);
    // The projector and the deliverer read which schema is live: after the views exist.
    for (const service of ['projector', 'webhooks'])
      expect(blocks.get(service), service).toMatch(
        /depends_on:[\s\S]*views: \{ condition: service_completed_successfully \}/,
      );
  });

  it('creates the roles in an init step mounted into the postgres image', () => {
    expect(blocks.get('postgres')).toContain('./infra/postgres/docker-init:/docker-entrypoint-initdb.d');
    const script = new URL('../infra/postgres/docker-init/10-roles.sh', import.meta.url);
    accessSync(script, constants.X_OK);
    const sql = readFileSync(script, 'utf8');
    // Every role of postgres:setup, with a password from .env.
    for (const role of Object.values(ROLES)) {
      expect(sql).toContain(`create role ${role} login`);
      expect(sql).toContain(`alter role ${role} password`);
      const pw = `${role.toUpperCase()}_PASSWORD`;
      expect(blocks.get('postgres')).toContain(`${pw}: \${${pw}:?`);
      expect(readFileSync(new URL('../infra/docker/.env.example', import.meta.url), 'utf8')).toMatch(
        new RegExp(`^${pw}=`, 'm'),
      );
    }
    expect(sql).toContain(`alter role ${ROLES.reader} set default_transaction_read_only = on`);
    expect(sql).toContain(`owner to ${ROLES.migrator}`);
  });
});
