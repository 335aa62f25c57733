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

  it('punctuation closing the sentence around a URL is kept', () => {
    expect(
      redactText('failed (requested https://h.example/v2/K3yK3y?k=K3yK3y). Retry, see http://h:1/x, then'),
    ).toBe(
      `failed (requested https://h.example/${REDACTED}?${REDACTED}). Retry, see http://h:1/${REDACTED}, then`,
    );
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

  it('a password holding quotes, a space, `@` or `:` is hidden whole, in a value or quoted in a message', () => {
    for (const pw of [`pa'ss`, 'pa"ss', 'pa ss', 'p@ss@w', 'pa:ss:w', `a'b" c@d:e`]) {
      const url = `postgres://vault:${pw}@db.internal:5432/vault_yield`;
      const shown = `postgres://vault:${REDACTED}@db.internal:5432/${REDACTED}`;
      expect(redactText(url), pw).toBe(shown);
      expect(redactText(`DATABASE_URL: bad (got "${url}")`), pw).toBe(`DATABASE_URL: bad (got "${shown}")`);
      expect(redactText(JSON.stringify({ msg: `connecting to ${url}`, x: 1 })), pw).toBe(
        JSON.stringify({ msg: `connecting to ${shown}`, x: 1 }),
      );
    }
  });

  it('credentials without `://` (user:password@host) lose their password', () => {
    expect(redactText('postgres:pw@db.internal/vault')).toBe(`postgres:${REDACTED}@db.internal/vault`);
    expect(redactText('broker user:p@ss:w0rd@127.0.0.1:9093 refused')).toBe(
      `broker user:${REDACTED}@127.0.0.1:9093 refused`,
    );
    expect(redactText('connect ECONNREFUSED 127.0.0.1:5432')).toBe('connect ECONNREFUSED 127.0.0.1:5432');
    expect(redactText('mail ops@example.com at 12:30')).toBe('mail ops@example.com at 12:30');
  });

  it('stack frames keep their paths (file:// URLs, scoped packages); a URL beside them is redacted', () => {
    const frame = '    at read (file:///work/main/node_modules/@vault-yield/chain/src/rpc/client.ts:10:3)';
    expect(redactText(frame)).toBe(frame);
    const stack = `Error: GET https://rpc.example.com/v2/K3yK3y failed\n${frame}`;
    expect(redactText(stack)).toBe(`Error: GET https://rpc.example.com/${REDACTED} failed\n${frame}`);
    const json = JSON.stringify({ stack: `Error: http://127.0.0.1:1/v2/K3yK3y\n${frame}` });
    expect(redactText(json)).toBe(
      JSON.stringify({ stack: `Error: http://127.0.0.1:1/${REDACTED}\n${frame}` }),
    );
  });

  it('no password survives, whatever characters it holds (property)', () => {
    // (a raw `"` followed by `,` `:` `}` `]` reads as the end of a JSON string: documented limit)
    const password = fc
      .string({ unit: fc.constantFrom(...`abcXYZ019'" @:!$%&*+,;=~-_.`), minLength: 8, maxLength: 30 })
      .filter((p) => /[A-Za-z0-9]{3}/.test(p) && !/"[,:}\]]/.test(p));
    fc.assert(
      fc.property(password, fc.constantFrom('postgres', 'https', 'kafka'), (pw, scheme) => {
        const url = `${scheme}://user:${pw}@host.example:1234/db`;
        for (const text of [url, `got "${url}"`, JSON.stringify({ msg: url }), `see ${url} then retry`]) {
          const out = redactText(text);
          expect(out).toContain(`user:${REDACTED}@host.example:1234`);
          expect(out.replace(`user:${REDACTED}@host.example:1234`, '')).not.toContain(pw);
        }
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
