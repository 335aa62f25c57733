import { BlockList, isIP } from 'node:net';
import { z } from 'zod';

/**
 * Which peers are our own proxies, so their `X-Forwarded-For` entries can be believed:
 * - `none`: the socket's peer is the client; `X-Forwarded-For` is ignored;
 * - `hops`: exactly this many proxies stand in front of the reader (each appends its peer);
 * - `cidrs`: any peer inside these ranges is a proxy of ours.
 * The client is the rightmost address that is not a trusted proxy: entries left of it were
 * written by the client itself and prove nothing (rotating them must not buy a fresh bucket).
 */
export type TrustedProxies =
  | { kind: 'none' }
  | { kind: 'hops'; hops: number }
  | { kind: 'cidrs'; cidrs: readonly string[] };

const MAX_ENTRIES = 64;

/** `::ffff:10.0.0.1` → `10.0.0.1` (Node reports IPv4 peers of a dual-stack socket that way). */
function plain(address: string): string {
  const a = address.trim().toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  return mapped?.[1] ?? a;
}

function parseCidr(entry: string): { address: string; prefix: number; type: 'ipv4' | 'ipv6' } | null {
  const [rawAddress = '', rawPrefix] = entry.trim().split('/');
  const address = plain(rawAddress);
  const family = isIP(address);
  if (family === 0) return null;
  const max = family === 4 ? 32 : 128;
  const prefix = rawPrefix === undefined ? max : Number(rawPrefix);
  if (!/^\d{1,3}$/.test(rawPrefix ?? String(max)) || prefix > max) return null;
  return { address, prefix, type: family === 4 ? 'ipv4' : 'ipv6' };
}

/**
 * `TRUSTED_PROXIES`: unset or `none`; a hop count (`1`, `2`, …); or a comma-separated list of
 * addresses and CIDR ranges (`10.0.0.0/8, 172.16.0.0/12, fd00::/8`).
 */
export const trustedProxiesField = () =>
  z
    .string()
    .default('none')
    .transform((s, ctx): TrustedProxies => {
      const v = s.trim();
      if (v === '' || v === 'none' || v === '0') return { kind: 'none' };
      if (/^\d+$/.test(v)) {
        const hops = Number(v);
        if (hops > 16) ctx.addIssue({ code: 'custom', message: 'a hop count is at most 16' });
        return { kind: 'hops', hops };
      }
      const cidrs = v
        .split(',')
        .map((c) => c.trim())
        .filter(Boolean);
      for (const c of cidrs)
        if (!parseCidr(c))
          ctx.addIssue({
            code: 'custom',
            message: `expected none, a hop count or a comma-separated list of IP addresses/CIDR ranges; ${JSON.stringify(c)} is neither`,
          });
      return { kind: 'cidrs', cidrs };
    });

/**
 * Returns the function that names a request's client from its socket peer and its
 * `X-Forwarded-For` header, under `trust`.
 */
export function createClientAddress(
  trust: TrustedProxies,
): (peer: string | undefined, forwardedFor: string | undefined) => string {
  const peerOf = (peer: string | undefined) => (peer ? plain(peer) : 'unknown');
  if (trust.kind === 'none') return (peer) => peerOf(peer);

  const entriesOf = (xff: string | undefined): string[] =>
    (xff ?? '')
      .split(',')
      .slice(-MAX_ENTRIES)
      .map((e) => plain(e).slice(0, 64))
      .filter(Boolean);

  if (trust.kind === 'hops') {
    // The peer is hop 1; each trusted hop vouches for the entry it appended (the next to the left).
    return (peer, xff) => {
      const chain = [...entriesOf(xff), peerOf(peer)];
      return chain[Math.max(0, chain.length - 1 - trust.hops)] as string;
    };
  }

  const trusted = createProxyCheck(trust);
  return (peer, xff) => {
    const chain = [...entriesOf(xff), peerOf(peer)];
    // Walk from the right over trusted proxies; the first address that is not one is the client.
    for (let i = chain.length - 1; i > 0; i--) if (!trusted(chain[i] as string)) return chain[i] as string;
    return chain[0] as string;
  };
}

/**
 * Whether a socket's peer is one of our proxies under `trust`: with a hop count every peer is
 * (nothing reaches the reader but through them), with a CIDR list a peer inside it, with `none`
 * no peer.
 */
export function createProxyCheck(trust: TrustedProxies): (peer: string) => boolean {
  if (trust.kind === 'none') return () => false;
  if (trust.kind === 'hops') return () => true;
  const list = new BlockList();
  for (const c of trust.cidrs) {
    const r = parseCidr(c);
    if (r) list.addSubnet(r.address, r.prefix, r.type);
  }
  return (peer) => {
    const address = plain(peer);
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  };
}

/** The eight 16-bit groups of an IPv6 address (embedded IPv4 tail included), or null. */
function ipv6Groups(address: string): number[] | null {
  let a = address;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (v4) {
    const [b0, b1, b2, b3] = v4.slice(1).map(Number) as [number, number, number, number];
    a = `${a.slice(0, v4.index)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const halves = a.split('::');
  if (halves.length > 2) return null;
  const part = (s: string) => (s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16)));
  const head = part(halves[0] ?? '');
  const tail = halves.length === 2 ? part(halves[1] ?? '') : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...Array<number>(Math.max(0, fill)).fill(0), ...tail];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff)
    ? groups
    : null;
}

/**
 * The rate-limit key of a client address: an IPv4 address is its own key; an IPv6 address is
 * keyed by its /64 (one subscriber's LAN or host gets a whole /64 and may rotate addresses in it
 * at will: per address, it would buy a fresh bucket each time); an IPv4-mapped IPv6 address
 * (`::ffff:a.b.c.d`, in any spelling) counts as the IPv4 address. Anything else (`unknown`) is
 * its own key.
 */
export function clientKey(address: string): string {
  return clientKeys(address)[0];
}

/**
 * The keys of a client address from narrowest to widest: `[clientKey]` for an IPv4 address
 * (an IPv4-mapped one included) or anything that is no address; `[/64, /56, /48]` for IPv6 — the
 * wider prefixes bound a host that rotates through the /64s of the /56 or /48 it was given.
 */
export function clientKeys(address: string): [string] | [string, string, string] {
  const a = address.trim().toLowerCase().replace(/%.*$/, ''); // a zone id names no other host
  const family = isIP(a);
  if (family === 4) return [a];
  if (family !== 6) return [address];
  const g = ipv6Groups(a);
  if (!g) return [a];
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    const [hi, lo] = [g[6] as number, g[7] as number];
    return [`${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`];
  }
  return [prefixKey(g, 64), prefixKey(g, 56), prefixKey(g, 48)];
}

/** `2001:db8:1:ab00::/56`: the first `bits` bits of the groups (a multiple of 8), the rest zero. */
function prefixKey(groups: readonly number[], bits: 48 | 56 | 64): string {
  const whole = Math.floor(bits / 16);
  const head = groups.slice(0, whole);
  if (bits % 16) head.push((groups[whole] as number) & 0xff00);
  return `${head.map((x) => x.toString(16)).join(':')}::/${bits}`;
}
