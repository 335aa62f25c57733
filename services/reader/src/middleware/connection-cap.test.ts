import { createLogger } from '@vault-yield/common';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readerConfigFromEnv } from '../config.js';
import { clientKeys } from './client-address.js';
import { type ConnectionCapConfig, createConnectionCap } from './connection-cap.js';

const NONE = { kind: 'none' } as const;
const CAPS: ConnectionCapConfig = { perAddress: 4, perIpv6Slash56: 8, perIpv6Slash48: 16 };

const group = fc.integer({ min: 0, max: 0xffff });
/** An IPv6 address in the /48 of `prefix` (3 groups), spelled as Node spells it (compressed). */
const inSlash48 = (prefix: readonly number[]) =>
  fc.array(group, { minLength: 5, maxLength: 5 }).map((rest) => spell([...prefix, ...rest]));
const spell = (groups: readonly number[]) =>
  new URL(`http://[${groups.map((g) => g.toString(16)).join(':')}]`).hostname.slice(1, -1);
const slash48 = fc.array(group, { minLength: 3, maxLength: 3 }).filter((p) => p[0] !== 0); // not ::ffff:…

describe('connection buckets (IPv4 address; IPv6 /64, /56, /48)', () => {
  it('an IPv6 address is keyed by its /64, /56 and /48, whatever its spelling', () => {
    expect(clientKeys('2001:db8:1:abcd::1')).toEqual([
      '2001:db8:1:abcd::/64',
      '2001:db8:1:ab00::/56',
      '2001:db8:1::/48',
    ]);
    expect(clientKeys('2001:0DB8:0001:ABFF:0:0:0:9%eth0')).toEqual([
      '2001:db8:1:abff::/64',
      '2001:db8:1:ab00::/56',
      '2001:db8:1::/48',
    ]);
    expect(clientKeys('203.0.113.9')).toEqual(['203.0.113.9']);
    expect(clientKeys('::ffff:203.0.113.9')).toEqual(['203.0.113.9']);
    expect(clientKeys('::ffff:cb00:7109')).toEqual(['203.0.113.9']);
    fc.assert(
      fc.property(
        slash48,
        fc.array(group, { minLength: 5, maxLength: 5 }),
        fc.array(group, { minLength: 5, maxLength: 5 }),
        (p, a, b) => {
          const ka = clientKeys(spell([...p, ...a]));
          const kb = clientKeys(spell([...p, ...b]));
          expect(ka[2]).toBe(kb[2]); // one /48
          expect(ka[1] === kb[1]).toBe((a[0] as number) >> 8 === (b[0] as number) >> 8); // one /56 iff bits 48–55 agree
          expect(ka[0] === kb[0]).toBe(a[0] === b[0]); // one /64 iff bits 48–63 agree
        },
      ),
    );
  });

  it('a host rotating through the /64s of its /48 holds at most the /48 cap, each /56 and /64 at most theirs; another /48 is unaffected', () => {
    fc.assert(
      fc.property(
        slash48.chain((p) =>
          fc.tuple(fc.constant(p), fc.array(inSlash48(p), { minLength: 1, maxLength: 300 })),
        ),
        slash48,
        ([home, rotation], away) => {
          fc.pre(home.join() !== away.join());
          const cap = createConnectionCap(CAPS, NONE);
          const held = new Map<string, number>();
          let admitted = 0;
          for (const address of rotation) {
            const r = cap.admit(address);
            if (typeof r === 'string') continue;
            admitted += 1;
            for (const k of clientKeys(address)) held.set(k, (held.get(k) ?? 0) + 1);
          }
          expect(admitted).toBeLessThanOrEqual(CAPS.perIpv6Slash48);
          for (const [k, n] of held)
            expect(n).toBeLessThanOrEqual(
              k.endsWith('/64')
                ? CAPS.perAddress
                : k.endsWith('/56')
                  ? CAPS.perIpv6Slash56
                  : CAPS.perIpv6Slash48,
            );
          expect(cap.stats().open).toBe(admitted);
          const refused = cap.stats().refused;
          expect(refused.address + refused.ipv6_56 + refused.ipv6_48).toBe(rotation.length - admitted);
          expect(typeof cap.admit(spell([...away, 1, 0, 0, 0, 1]))).toBe('function');
        },
      ),
    );
  });

  it('each cap refuses with its reason, and a socket that closes gives its slot back', () => {
    const cap = createConnectionCap(CAPS, NONE);
    const releases = Array.from({ length: 4 }, () => cap.admit('2001:db8:1:100::1'));
    expect(releases.every((r) => typeof r === 'function')).toBe(true);
    expect(cap.admit('2001:db8:1:100::ffff')).toBe('address'); // same /64, another address
    for (let k = 0; k < 4; k++) cap.admit(`2001:db8:1:110::${k}`); // another /64 of the /56
    expect(cap.admit('2001:db8:1:1ff::1')).toBe('ipv6_56'); // a fresh /64 of the full /56
    for (const slash56 of ['200', '300'])
      for (let k = 0; k < 4; k++) cap.admit(`2001:db8:1:${slash56}::${k}`);
    expect(cap.admit('2001:db8:1:900::1')).toBe('ipv6_48'); // a fresh /56 of the full /48
    expect(cap.stats()).toMatchObject({
      open: 16,
      refused: { address: 1, ipv6_56: 1, ipv6_48: 1, total: 0 },
    });
    const release = releases[0] as () => void;
    release();
    release(); // once only
    expect(cap.stats().open).toBe(15);
    expect(typeof cap.admit('2001:db8:1:100::2')).toBe('function');
    // IPv4: the address, an IPv4-mapped spelling included.
    for (let i = 0; i < 4; i++) cap.admit(i % 2 ? '198.51.100.7' : '::ffff:198.51.100.7');
    expect(cap.admit('198.51.100.7')).toBe('address');
    expect(typeof cap.admit('198.51.100.8')).toBe('function');
  });

  it('a client at its cap is logged once while it stays there, not once a refused socket', () => {
    const lines: { client?: string; reason?: string; cap?: number; msg?: string }[] = [];
    const log = createLogger({
      name: 'test',
      level: 'info',
      destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
    });
    const cap = createConnectionCap({ ...CAPS, perAddress: 2 }, NONE, log);
    const first = cap.admit('198.51.100.7') as () => void;
    cap.admit('198.51.100.7');
    for (let i = 0; i < 100; i++) cap.admit('198.51.100.7');
    expect(lines).toMatchObject([{ client: '198.51.100.7', reason: 'address', cap: 2 }]);
    first(); // below its cap: a new episode is logged again
    cap.admit('198.51.100.7');
    cap.admit('198.51.100.7');
    expect(lines).toHaveLength(2);
    expect(cap.stats().refused.address).toBe(101);
  });

  it('0 turns a cap off; a trusted proxy is not capped (CIDR: the listed peers; a hop count: every peer)', () => {
    const off = createConnectionCap({ perAddress: 0, perIpv6Slash56: 0, perIpv6Slash48: 0 }, NONE);
    for (let i = 0; i < 100; i++) expect(typeof off.admit('198.51.100.7')).toBe('function');
    const only48 = createConnectionCap({ perAddress: 0, perIpv6Slash56: 0, perIpv6Slash48: 2 }, NONE);
    only48.admit('2001:db8:1:1::1');
    only48.admit('2001:db8:1:2::1');
    expect(only48.admit('2001:db8:1:3::1')).toBe('ipv6_48');

    const cidrs = createConnectionCap({ ...CAPS, perAddress: 1 }, { kind: 'cidrs', cidrs: ['10.0.0.0/8'] });
    for (let i = 0; i < 10; i++) expect(typeof cidrs.admit('::ffff:10.1.2.3')).toBe('function');
    cidrs.admit('198.51.100.7');
    expect(cidrs.admit('198.51.100.7')).toBe('address');
    const hops = createConnectionCap({ ...CAPS, perAddress: 1 }, { kind: 'hops', hops: 1 });
    for (let i = 0; i < 10; i++) expect(typeof hops.admit('198.51.100.7')).toBe('function');
    expect(hops.stats().open).toBe(10);
  });

  it('the environment: 64 per address, 128 per IPv6 /56, 256 per /48 unless set', () => {
    const env = { DATABASE_URL: 'postgres://r@127.0.0.1/db' };
    expect(readerConfigFromEnv(env).connections).toEqual({
      perAddress: 64,
      perIpv6Slash56: 128,
      perIpv6Slash48: 256,
    });
    expect(
      readerConfigFromEnv({
        ...env,
        MAX_CONNECTIONS_PER_ADDRESS: '0',
        MAX_CONNECTIONS_PER_IPV6_56: '10',
        MAX_CONNECTIONS_PER_IPV6_48: '20',
      }).connections,
    ).toEqual({ perAddress: 0, perIpv6Slash56: 10, perIpv6Slash48: 20 });
    expect(() => readerConfigFromEnv({ ...env, MAX_CONNECTIONS_PER_ADDRESS: '-1' })).toThrow(
      /MAX_CONNECTIONS_PER_ADDRESS/,
    );
  });
});
