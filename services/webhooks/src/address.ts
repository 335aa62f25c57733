import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP, isIPv4 } from 'node:net';

/**
 * Where a callback may go (SSRF defence, #42 item 6): an endpoint's host resolves once, every
 * address it resolves to is checked, and the connection goes to the checked address itself — a
 * second DNS answer (rebinding) is never asked for. Addresses inside the network the deliverer
 * runs in (loopback, private, link-local with the cloud metadata address, CGNAT, multicast,
 * reserved, and IPv6 forms carrying one of those IPv4 addresses) are refused unless an operator
 * allowed their network (`WEBHOOK_ALLOW_NETWORKS`).
 */

/** IPv4 networks never delivered to (unless allowed). */
const FORBIDDEN_V4: readonly [string, number, string][] = [
  ['0.0.0.0', 8, 'an unspecified ("this network") address'],
  ['10.0.0.0', 8, 'a private address'],
  ['100.64.0.0', 10, 'a private (CGNAT) address'],
  ['127.0.0.0', 8, 'a loopback address'],
  ['169.254.0.0', 16, 'a link-local address'],
  ['172.16.0.0', 12, 'a private address'],
  ['192.0.0.0', 24, 'a reserved address'],
  ['192.0.2.0', 24, 'a reserved address'],
  ['192.168.0.0', 16, 'a private address'],
  ['198.18.0.0', 15, 'a reserved address'],
  ['198.51.100.0', 24, 'a reserved address'],
  ['203.0.113.0', 24, 'a reserved address'],
  ['224.0.0.0', 4, 'a multicast address'],
  ['240.0.0.0', 4, 'a reserved (or broadcast) address'],
];

/** IPv6 networks never delivered to (unless allowed); forms embedding IPv4 are checked as that IPv4. */
const FORBIDDEN_V6: readonly [string, number, string][] = [
  ['::', 128, 'an unspecified address'],
  ['::1', 128, 'a loopback address'],
  ['100::', 64, 'a reserved address'],
  ['2001:db8::', 32, 'a reserved address'],
  ['fc00::', 7, 'a private address'],
  ['fe80::', 10, 'a link-local address'],
  ['fec0::', 10, 'a private (site-local) address'],
  ['ff00::', 8, 'a multicast address'],
];

const forbiddenV4 = FORBIDDEN_V4.map(([net, prefix, why]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, 'ipv4');
  return { list, why };
});
const forbiddenV6 = FORBIDDEN_V6.map(([net, prefix, why]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, 'ipv6');
  return { list, why };
});

/** The 8 groups of an IPv6 address (a dotted IPv4 tail taken as two groups). */
function ipv6Groups(address: string): number[] {
  let a = address.toLowerCase();
  const zone = a.indexOf('%');
  if (zone >= 0) a = a.slice(0, zone);
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (tail?.[1]) {
    const [p, q, r, s] = tail[1].split('.').map(Number) as [number, number, number, number];
    a = `${a.slice(0, -tail[1].length)}${((p << 8) | q).toString(16)}:${((r << 8) | s).toString(16)}`;
  }
  const [head = '', rest] = a.split('::') as [string, string | undefined];
  const part = (s: string) => (s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16)));
  const h = part(head);
  if (rest === undefined) return h;
  const t = part(rest);
  return [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
}

const v4Of = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 address an IPv6 one carries, when it is a form that reaches it: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96, 64:ff9b:1::/48) and 6to4
 * (2002::/16).
 */
export function embeddedIPv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  if (g.length !== 8) return undefined;
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, hi = 0, lo = 0] = g;
  if (
    a === 0 &&
    b === 0 &&
    c === 0 &&
    d === 0 &&
    e === 0 &&
    (f === 0xffff || f === 0) &&
    (hi !== 0 || lo > 1)
  )
    return v4Of(hi, lo);
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return v4Of(hi, lo);
  if (a === 0x64 && b === 0xff9b && c === 1) return v4Of(hi, lo);
  if (a === 0x2002) return v4Of(b, c);
  return undefined;
}

/** Operator-allowed networks (`WEBHOOK_ALLOW_NETWORKS`): CIDRs or single addresses, comma-separated. */
export interface AllowList {
  readonly text: string;
  has(address: string): boolean;
}

/** Parses `10.0.0.0/8, fd00::/8, 192.168.1.7`; throws on anything else. Empty: nothing allowed. */
export function parseAllowList(text: string | undefined): AllowList {
  const list = new BlockList();
  const items = (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const item of items) {
    const [net = '', prefix] = item.split('/');
    const family = isIP(net);
    if (family === 0) throw new Error(`not a network: ${item} (expected a CIDR like 10.0.0.0/8 or fd00::/8)`);
    const max = family === 4 ? 32 : 128;
    const bits = prefix === undefined ? max : Number(prefix);
    if (!Number.isInteger(bits) || bits < 0 || bits > max || (prefix !== undefined && !/^\d+$/.test(prefix)))
      throw new Error(`not a network: ${item} (prefix length 0–${max})`);
    list.addSubnet(net, bits, family === 4 ? 'ipv4' : 'ipv6');
  }
  return {
    text: items.join(','),
    has(address) {
      const v4 = isIPv4(address) ? address : embeddedIPv4(address);
      if (list.check(address, isIPv4(address) ? 'ipv4' : 'ipv6')) return true;
      return v4 !== undefined && list.check(v4, 'ipv4');
    },
  };
}

export const NOTHING_ALLOWED: AllowList = parseAllowList('');

/** Why `address` (an IP literal) is not delivered to, or null when it may be. */
export function forbiddenReason(address: string, allow: AllowList = NOTHING_ALLOWED): string | null {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (allow.has(address)) return null;
  if (family === 4) return forbiddenV4.find((n) => n.list.check(address, 'ipv4'))?.why ?? null;
  const v4 = embeddedIPv4(address);
  if (v4 !== undefined) {
    const why = forbiddenV4.find((n) => n.list.check(v4, 'ipv4'))?.why;
    if (why) return `${why} (in IPv6 form)`;
  }
  return forbiddenV6.find((n) => n.list.check(address, 'ipv6'))?.why ?? null;
}

/** A URL's host as an IP literal (brackets off), or undefined for a name. */
export function hostAddress(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) ? host : undefined;
}

/**
 * Why an endpoint URL is refused at `webhooks add`, or null: not http(s), credentials in it, or a
 * host that is a forbidden address in any spelling (WHATWG URL parsing turns 2130706433, 0177.1,
 * 0x7f.1 and 127.1 into 127.0.0.1; IPv6 forms are checked for the IPv4 they carry), or a name that
 * is loopback by definition (localhost, *.localhost).
 */
export function refusedUrl(url: URL, allow: AllowList = NOTHING_ALLOWED): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `only http:// and https:// URLs are delivered to, got ${url.protocol}`;
  if (url.username !== '' || url.password !== '')
    return 'credentials in the URL are refused (the receiver verifies the signature instead)';
  const address = hostAddress(url);
  if (address !== undefined) {
    const why = forbiddenReason(address, allow);
    return why ? `${url.hostname} is ${why} (allow its network with WEBHOOK_ALLOW_NETWORKS)` : null;
  }
  const name = url.hostname.toLowerCase().replace(/\.$/, '');
  if ((name === 'localhost' || name.endsWith('.localhost')) && !allow.has('127.0.0.1'))
    return `${url.hostname} is a loopback name (allow its network with WEBHOOK_ALLOW_NETWORKS)`;
  return null;
}

/** One resolved address. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address it has (the deliverer's is dns.lookup; tests inject theirs). */
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolve: Resolve = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

/** What a host resolved to: the address to connect to, or why none may be. */
export type Checked = { ok: true; address: ResolvedAddress } | { ok: false; reason: string };

/** Resolves `url`'s host once and checks every address: one forbidden is enough to refuse. */
export async function checkDestination(url: URL, allow: AllowList, resolve: Resolve): Promise<Checked> {
  const literal = hostAddress(url);
  const addresses: ResolvedAddress[] =
    literal !== undefined
      ? [{ address: literal, family: isIPv4(literal) ? 4 : 6 }]
      : await resolve(url.hostname);
  if (addresses.length === 0) return { ok: false, reason: `${url.hostname} resolves to no address` };
  for (const a of addresses)
    if (forbiddenReason(a.address, allow) !== null)
      return { ok: false, reason: `refused: ${url.hostname} resolves to a private address` };
  return { ok: true, address: addresses[0] as ResolvedAddress };
}
