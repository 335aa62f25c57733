import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readerConfigFromEnv } from '../config.js';
import { createClientAddress, type TrustedProxies, trustedProxiesField } from './client-address.js';

const ipv4 = fc.ipV4();
const DB = { DATABASE_URL: 'postgres://r@127.0.0.1/db' };

describe('client address behind proxies', () => {
  it('no trusted proxy: the socket peer, whatever X-Forwarded-For says', () => {
    const client = createClientAddress({ kind: 'none' });
    expect(client('203.0.113.9', '1.2.3.4')).toBe('203.0.113.9');
    expect(client('::ffff:203.0.113.9', undefined)).toBe('203.0.113.9');
    expect(client(undefined, '1.2.3.4')).toBe('unknown');
  });

  it('hop count: the entry the outermost trusted proxy appended', () => {
    const one = createClientAddress({ kind: 'hops', hops: 1 });
    expect(one('10.0.0.2', '198.51.100.7')).toBe('198.51.100.7');
    expect(one('10.0.0.2', 'spoofed, 198.51.100.7')).toBe('198.51.100.7');
    expect(one('10.0.0.2', undefined)).toBe('10.0.0.2'); // came straight in, no proxy
    const two = createClientAddress({ kind: 'hops', hops: 2 });
    expect(two('10.0.0.2', 'spoofed, 198.51.100.7, 10.0.0.1')).toBe('198.51.100.7');
  });

  it('CIDR list: the rightmost address that is not one of our proxies', () => {
    const client = createClientAddress({ kind: 'cidrs', cidrs: ['10.0.0.0/8', 'fd00::/8', '192.168.1.1'] });
    expect(client('10.1.2.3', '198.51.100.7, 10.9.9.9')).toBe('198.51.100.7');
    expect(client('::ffff:10.1.2.3', 'spoofed, 198.51.100.7, fd00::1')).toBe('198.51.100.7');
    expect(client('192.168.1.1', '2001:db8::5')).toBe('2001:db8::5');
    // A peer that is no proxy of ours is the client: its X-Forwarded-For is its own invention.
    expect(client('198.51.100.8', '10.0.0.1, 1.1.1.1')).toBe('198.51.100.8');
    // Garbage where an address should be is the client as written (its own bucket, bounded).
    expect(client('10.0.0.1', 'not-an-ip')).toBe('not-an-ip');
  });

  it('rotating the client-written entries never changes the client (property)', () => {
    const cases: TrustedProxies[] = [
      { kind: 'hops', hops: 1 },
      { kind: 'hops', hops: 2 },
      { kind: 'cidrs', cidrs: ['10.0.0.0/8'] },
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...cases),
        fc.array(fc.oneof(ipv4, fc.string({ maxLength: 20 })), { maxLength: 8 }),
        fc.array(fc.oneof(ipv4, fc.string({ maxLength: 20 })), { maxLength: 8 }),
        ipv4.filter((a) => !a.startsWith('10.')),
        (trust, forgedA, forgedB, real) => {
          const client = createClientAddress(trust);
          // What our proxies add: the real client, then (for two hops / CIDRs) an inner proxy.
          const appended = trust.kind === 'hops' && trust.hops === 1 ? [real] : [real, '10.0.0.1'];
          const header = (forged: string[]) =>
            [...forged.map((f) => f.replace(/,/g, '')), ...appended].join(', ');
          expect(client('10.0.0.2', header(forgedA))).toBe(real);
          expect(client('10.0.0.2', header(forgedB))).toBe(real);
        },
      ),
    );
  });

  it('TRUSTED_PROXIES: none, a hop count or a CIDR list; anything else is refused by name', () => {
    const parse = (v: string | undefined) => trustedProxiesField().parse(v);
    expect(parse(undefined)).toEqual({ kind: 'none' });
    expect(parse('0')).toEqual({ kind: 'none' });
    expect(parse('2')).toEqual({ kind: 'hops', hops: 2 });
    expect(parse('10.0.0.0/8, ::1')).toEqual({ kind: 'cidrs', cidrs: ['10.0.0.0/8', '::1'] });
    expect(() => readerConfigFromEnv({ ...DB, TRUSTED_PROXIES: '10.0.0.0/33' })).toThrow(
      /TRUSTED_PROXIES: .*"10\.0\.0\.0\/33" is neither/,
    );
    expect(() => readerConfigFromEnv({ ...DB, TRUSTED_PROXIES: 'proxy.internal' })).toThrow(
      /TRUSTED_PROXIES/,
    );
    expect(() => readerConfigFromEnv({ ...DB, TRUST_PROXY: 'true' })).toThrow(
      /TRUST_PROXY: replaced by TRUSTED_PROXIES/,
    );
    expect(readerConfigFromEnv({ ...DB, TRUSTED_PROXIES: '1' }).rateLimit.trustedProxies).toEqual({
      kind: 'hops',
      hops: 1,
    });
  });

  it('HTTP limits: defaults, and headers time-out no longer than the request time-out', () => {
    expect(readerConfigFromEnv(DB).http).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 1_000,
    });
    expect(() =>
      readerConfigFromEnv({ ...DB, HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '1000' }),
    ).toThrow(/HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS/);
  });
});
