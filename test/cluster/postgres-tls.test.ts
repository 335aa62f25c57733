import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, createConfig, envField } from '@vault-yield/common';
import { createPgPool, migrate } from '@vault-yield/store';
import { kafkaBrokers, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  checksums,
  createTopic,
  deleteTopics,
  projector,
  publish,
  VAULT_TABLES,
} from '../projector/support.js';

/**
 * Postgres over TLS: a private cluster (initdb in a temp dir, its own port, never the machine's
 * Postgres) that accepts TLS connections only, with a self-signed certificate made by openssl.
 * The services take TLS from DATABASE_URL: `sslmode=verify-full&sslrootcert=<CA file>`.
 */
const port = Number(process.env.CLUSTER_POSTGRES_PORT ?? 31760);
let dir: string;
let ca: string;
const url = (params: string) => `postgres://postgres@127.0.0.1:${port}/postgres?${params}`;
const verified = () => url(`sslmode=verify-full&sslrootcert=${ca}`);

/** Postgres refuses to run as root: as root, its tools run as the `postgres` user (owning the dir). */
function pgTool(tool: string, args: string[]): void {
  if (process.getuid?.() === 0) {
    execFileSync('chown', ['-R', 'postgres', dir]);
    execFileSync('runuser', ['-u', 'postgres', '--', tool, ...args], { stdio: 'ignore' });
  } else {
    execFileSync(tool, args, { stdio: 'ignore' });
  }
}

function portFree(p: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(p, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

beforeAll(async () => {
  if (!(await portFree(port)))
    throw new Error(`port ${port} is taken; set CLUSTER_POSTGRES_PORT to a free one`);
  dir = mkdtempSync(join(tmpdir(), 'vault-pg-tls-'));
  const data = join(dir, 'data');
  pgTool('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  ca = join(dir, 'server.crt');
  // The key is written into the data dir: initdb first, then openssl.
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '30',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      join(data, 'server.key'),
      '-out',
      ca,
    ],
    { stdio: 'ignore' },
  );
  execFileSync('chmod', ['600', join(data, 'server.key')]);
  writeFileSync(
    join(data, 'postgresql.auto.conf'),
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      'ssl = on',
      `ssl_cert_file = '${ca}'`,
      "ssl_key_file = 'server.key'",
      'max_connections = 40',
      "shared_buffers = '32MB'",
      'fsync = off',
    ].join('\n'),
  );
  // TLS or nothing: a plaintext connection is refused by pg_hba.
  writeFileSync(
    join(data, 'pg_hba.conf'),
    [
      'local all all trust',
      'hostssl all all 127.0.0.1/32 trust',
      'hostnossl all all 127.0.0.1/32 reject',
    ].join('\n'),
  );
  pgTool('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', 'start']);
}, 120_000);

afterAll(async () => {
  await deleteTopics();
  if (dir) {
    try {
      pgTool('pg_ctl', ['-D', join(dir, 'data'), '-m', 'fast', '-w', 'stop']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

async function sslOf(connection: string): Promise<boolean> {
  const pool = createPgPool({ url: connection, applicationName: 'tls-test', max: 1 });
  try {
    const { rows } = await pool.query<{ ssl: boolean }>(
      'select ssl from pg_stat_ssl where pid = pg_backend_pid()',
    );
    return rows[0]?.ssl ?? false;
  } finally {
    await pool.end();
  }
}

describe('Postgres over TLS', () => {
  it('connects verified against the CA file; plaintext and an untrusted server are refused', async () => {
    expect(await sslOf(verified())).toBe(true);
    await expect(sslOf(url('sslmode=disable'))).rejects.toThrow(/no encryption/);
    // The system CAs do not know a self-signed certificate.
    await expect(sslOf(url('sslmode=verify-full'))).rejects.toThrow(/self[- ]signed certificate/);
  });

  it('DATABASE_URL TLS parameters are validated with clear messages', () => {
    const schema = z.object({ DATABASE_URL: envField.postgresUrl() });
    expect(createConfig(schema, { DATABASE_URL: verified() }).DATABASE_URL).toBe(verified());
    const bad = (u: string) => {
      try {
        createConfig(schema, { DATABASE_URL: u });
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error(`accepted ${u}`);
    };
    expect(bad(url('sslmode=require'))).toMatch(/sslmode=require is not supported: use verify-full/);
    expect(bad(url('sslmode=verify-full&sslrootcert=/nope/ca.pem'))).toMatch(
      /sslrootcert \/nope\/ca.pem: expected a readable file/,
    );
    expect(bad(url(`sslrootcert=${ca}`))).toMatch(/sslrootcert needs sslmode=verify-full/);
  });

  it('the projector folds the log into a TLS-only Postgres', async () => {
    const pool = createPgPool({ url: verified(), applicationName: 'tls-migrate', max: 1 });
    try {
      await migrate(pool, 'vault_yield');
    } finally {
      await pool.end();
    }
    const topic = uniqueTopic('pg-tls');
    const records = createHistoryGenerator({ vaults: 30, seed: 5 }).take(2_000);
    await createTopic(kafkaBrokers(), topic);
    await publish(kafkaBrokers(), topic, records);
    const p = projector({
      brokers: kafkaBrokers(),
      url: verified(),
      schema: 'vault_yield',
      topic,
      group: 'tls',
    });
    await p.start();
    await p.caughtUp();
    await p.stop();
    const sums = await checksums(verified(), 'vault_yield', VAULT_TABLES);
    // Sequenced marks have no ledger rows.
    expect(sums.ledger?.rows).toBe(records.filter((r) => r.type !== 'mark').length);
  });
});
