import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createConfig, envField } from '../config/index.js';
import { kafkaSecurity, kafkaSecurityShape } from './index.js';

const schema = z.object({ KAFKA_BROKERS: envField.brokers(), ...kafkaSecurityShape });
const dir = mkdtempSync(join(tmpdir(), 'vault-sec-'));
const ca = join(dir, 'ca.pem');
writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n');
const base = { KAFKA_BROKERS: '127.0.0.1:9092' };

function message(env: Record<string, string>): string {
  try {
    createConfig(schema, { ...base, ...env });
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('accepted');
}

describe('Kafka security config', () => {
  it('is plaintext by default', () => {
    expect(kafkaSecurity(createConfig(schema, base))).toEqual({});
  });

  it('reads SASL (mechanism in any case) and TLS with a CA file', () => {
    const cfg = createConfig(schema, {
      ...base,
      KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
      KAFKA_SASL_USERNAME: 'vault',
      KAFKA_SASL_PASSWORD: 'secret',
      KAFKA_SSL: 'true',
      KAFKA_SSL_CA_FILE: ca,
    });
    expect(kafkaSecurity(cfg)).toEqual({
      sasl: { mechanism: 'scram-sha-512', username: 'vault', password: 'secret' },
      ssl: { ca: ['-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n'] },
    });
    expect(kafkaSecurity(createConfig(schema, { ...base, KAFKA_SSL: 'yes' }))).toEqual({ ssl: true });
  });

  it('names each bad or missing variable, never echoing a password', () => {
    expect(message({ KAFKA_SASL_MECHANISM: 'gssapi' })).toMatch(
      /KAFKA_SASL_MECHANISM: expected PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 \(got "gssapi"\)/,
    );
    const missing = message({ KAFKA_SASL_MECHANISM: 'plain' });
    expect(missing).toMatch(/KAFKA_SASL_USERNAME: required when KAFKA_SASL_MECHANISM is set/);
    expect(missing).toMatch(/KAFKA_SASL_PASSWORD: required when KAFKA_SASL_MECHANISM is set/);
    const orphan = message({ KAFKA_SASL_PASSWORD: 'hunter2' });
    expect(orphan).toMatch(
      /KAFKA_SASL_MECHANISM: required when KAFKA_SASL_USERNAME or KAFKA_SASL_PASSWORD is set/,
    );
    expect(orphan).not.toContain('hunter2');
    expect(message({ KAFKA_SSL_CA_FILE: ca })).toMatch(
      /KAFKA_SSL: must be true when KAFKA_SSL_CA_FILE is set/,
    );
    expect(message({ KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: join(dir, 'missing.pem') })).toMatch(
      /KAFKA_SSL_CA_FILE: expected a readable file/,
    );
    expect(message({ KAFKA_SSL: 'sometimes' })).toMatch(/KAFKA_SSL: expected true or false/);
  });

  it('refuses SASL PLAIN without TLS in one line unless explicitly allowed, never echoing the password', () => {
    const plain = {
      KAFKA_SASL_MECHANISM: 'PLAIN',
      KAFKA_SASL_USERNAME: 'vault',
      KAFKA_SASL_PASSWORD: 'hunter2',
    };
    const refused = message(plain);
    expect(refused.split('\n').filter((l) => l.startsWith('  '))).toEqual([
      '  KAFKA_SASL_MECHANISM: PLAIN sends the password in clear without TLS: set KAFKA_SSL=true, use SCRAM-SHA-256/512, or allow it with KAFKA_SASL_ALLOW_PLAINTEXT=true (got "PLAIN")',
    ]);
    expect(refused).not.toContain('hunter2');
    expect(message({ ...plain, KAFKA_SASL_ALLOW_PLAINTEXT: 'no' })).toMatch(
      /KAFKA_SASL_ALLOW_PLAINTEXT=true/,
    );
    expect(
      kafkaSecurity(createConfig(schema, { ...base, ...plain, KAFKA_SASL_ALLOW_PLAINTEXT: 'true' })),
    ).toEqual({
      sasl: { mechanism: 'plain', username: 'vault', password: 'hunter2' },
    });
    expect(kafkaSecurity(createConfig(schema, { ...base, ...plain, KAFKA_SSL: 'true' })).ssl).toBe(true);
    // SCRAM never sends the password itself: allowed over plaintext.
    expect(() =>
      createConfig(schema, { ...base, ...plain, KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256' }),
    ).not.toThrow();
  });

  it('reads a client certificate and its key for mTLS, and wants both with TLS on', () => {
    const cert = join(dir, 'client.pem');
    const key = join(dir, 'client.key');
    writeFileSync(cert, 'CERT');
    writeFileSync(key, 'KEY');
    const mtls = { KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: cert, KAFKA_SSL_KEY_FILE: key };
    expect(kafkaSecurity(createConfig(schema, { ...base, ...mtls, KAFKA_SSL_CA_FILE: ca }))).toEqual({
      ssl: { ca: ['-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n'], cert: 'CERT', key: 'KEY' },
    });
    expect(kafkaSecurity(createConfig(schema, { ...base, ...mtls }))).toEqual({
      ssl: { cert: 'CERT', key: 'KEY' },
    });
    expect(message({ KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: cert })).toMatch(
      /KAFKA_SSL_KEY_FILE: required when KAFKA_SSL_CERT_FILE is set/,
    );
    expect(message({ KAFKA_SSL: 'true', KAFKA_SSL_KEY_FILE: key })).toMatch(
      /KAFKA_SSL_CERT_FILE: required when KAFKA_SSL_KEY_FILE is set/,
    );
    expect(message({ KAFKA_SSL_CERT_FILE: cert, KAFKA_SSL_KEY_FILE: key })).toMatch(
      /KAFKA_SSL: must be true when KAFKA_SSL_CERT_FILE is set/,
    );
    expect(
      message({ KAFKA_SSL: 'true', KAFKA_SSL_CERT_FILE: join(dir, 'none.pem'), KAFKA_SSL_KEY_FILE: key }),
    ).toMatch(/KAFKA_SSL_CERT_FILE: expected a readable file/);
  });
});

describe('Postgres TLS in DATABASE_URL', () => {
  const pg = z.object({ DATABASE_URL: envField.postgresUrl() });
  const check = (url: string) => pg.safeParse({ DATABASE_URL: url });
  it('accepts verify-full with a readable CA file, no-verify and disable', () => {
    expect(check(`postgres://h/db?sslmode=verify-full&sslrootcert=${ca}`).success).toBe(true);
    expect(check('postgres://h/db?sslmode=verify-full').success).toBe(true);
    expect(check('postgres://h/db?sslmode=no-verify').success).toBe(true);
    expect(check('postgres://h/db?sslmode=disable').success).toBe(true);
    expect(check('postgres://h/db').success).toBe(true);
  });
  it('refuses modes node-postgres does not give libpq meaning, and a missing CA file', () => {
    for (const mode of ['require', 'verify-ca', 'prefer', 'bogus']) {
      expect(check(`postgres://h/db?sslmode=${mode}`).error?.issues[0]?.message).toMatch(/use verify-full/);
    }
    expect(
      check('postgres://h/db?sslmode=verify-full&sslrootcert=/no/ca.pem').error?.issues[0]?.message,
    ).toMatch(/expected a readable file/);
  });
});
