import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSecretName, REDACTED, redactText, redactValue, shownValue } from './index.js';

describe('secrets never echoed', () => {
  it('a URL keeps scheme, user, host and port; loses password, path and query', () => {
    expect(redactText('postgres://vault:S3cret@db.internal:5432/vault_yield?sslmode=require')).toBe(
      `postgres://vault:${REDACTED}@db.internal:5432/${REDACTED}?${REDACTED}`,
    );
    expect(redactText('https://eth-mainnet.g.alchemy.com/v2/AbCdEf0123456789xyz')).toBe(
      `https://eth-mainnet.g.alchemy.com/${REDACTED}`,
    );
    expect(redactText('https://rpc.example.org/?apikey=k3y')).toBe(`https://rpc.example.org/?${REDACTED}`);
    expect(redactText('http://127.0.0.1:8545')).toBe('http://127.0.0.1:8545');
    expect(redactText('http://127.0.0.1:8545/')).toBe('http://127.0.0.1:8545/');
    expect(redactText('postgres://token@host/db')).toBe(`postgres://${REDACTED}@host/${REDACTED}`);
  });

  it('URLs inside messages (viem puts the request URL in its errors) are redacted in place', () => {
    const msg =
      'HTTP request failed.\n\nURL: https://mainnet.infura.io/v3/0123456789abcdef\nRequest body: {}';
    const out = redactText(msg);
    expect(out).not.toContain('0123456789abcdef');
    expect(out).toContain(`URL: https://mainnet.infura.io/${REDACTED}\nRequest body: {}`);
    expect(redactText('no url here')).toBe('no url here');
  });

  it('any password or key placed in a URL never survives (property)', () => {
    const secret = fc.stringMatching(/^[A-Za-z0-9]{12,40}$/);
    fc.assert(
      fc.property(secret, fc.constantFrom('postgres', 'https', 'wss', 'kafka'), (s, scheme) => {
        for (const url of [
          `${scheme}://user:${s}@host.example:1234/db`,
          `${scheme}://host.example/v2/${s}`,
          `${scheme}://host.example/path?key=${s}&x=1`,
          `see ${scheme}://u:${s}@h/x, then retry`,
        ])
          expect(redactText(url)).not.toContain(s);
      }),
    );
  });

  it('settings named like a secret are hidden whole; files and plain names are not', () => {
    for (const n of [
      'KAFKA_SASL_PASSWORD',
      'PGPASSWORD',
      'WEBHOOK_SECRET',
      'ADMIN_TOKEN',
      'RPC_API_KEY',
      'password',
      'apiKey',
    ])
      expect(isSecretName(n), n).toBe(true);
    for (const n of ['KAFKA_SSL_KEY_FILE', 'KAFKA_SASL_PASSWORD_FILE', 'RPC_URL', 'key', 'LOG_LEVEL'])
      expect(isSecretName(n), n).toBe(false);
    expect(shownValue('KAFKA_SASL_PASSWORD', 'hunter2')).toBe(REDACTED);
    expect(shownValue('DATABASE_URL', 'postgres://u:p4ss@h/d')).toBe(
      `postgres://u:${REDACTED}@h/${REDACTED}`,
    );
  });

  it('log objects: strings redacted at any depth, secret-named fields hidden, untouched objects kept', () => {
    const plain = { block: 12, msg: 'ok', nested: { a: 'b' } };
    expect(redactValue(plain)).toBe(plain);
    const out = redactValue({
      url: 'postgres://u:p4ss@h/d',
      nested: { list: ['https://h/v3/k3yk3yk3y'] },
      password: 'hunter2',
    });
    expect(JSON.stringify(out)).not.toMatch(/p4ss|k3yk3yk3y|hunter2/);
  });
});
