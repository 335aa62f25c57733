import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '@vault-yield/common';
import { clientKeys, createProxyCheck, type TrustedProxies } from './client-address.js';

export interface ConnectionCapConfig {
  /** Open sockets of one IPv4 address or IPv6 /64 at once; 0 = no cap. */
  perAddress: number;
  /** Open sockets of one IPv6 /56 at once; 0 = no cap. */
  perIpv6Slash56: number;
  /** Open sockets of one IPv6 /48 at once; 0 = no cap. */
  perIpv6Slash48: number;
}

/**
 * Why a socket was closed at accept: its address (an IPv4 address or IPv6 /64), its IPv6 /56 or
 * /48 held their cap, or the server held `maxConnections` (Node's own refusal, counted here).
 */
export type RefusalReason = 'address' | 'ipv6_56' | 'ipv6_48' | 'total';
export const REFUSAL_REASONS: readonly RefusalReason[] = ['address', 'ipv6_56', 'ipv6_48', 'total'];

export interface ConnectionStats {
  /** Sockets the server holds now (its trusted proxies' included). */
  open: number;
  /** Sockets closed at accept since start, by reason. */
  refused: Record<RefusalReason, number>;
}

export interface ConnectionCap {
  /**
   * Counts a socket of `peer` in its buckets and returns the function that uncounts it, or the
   * reason it is refused (a bucket at its cap: nothing counted).
   */
  admit(peer: string | undefined): (() => void) | RefusalReason;
  /** Applies the cap to every socket `server` accepts, before it reads a byte. */
  attach(server: Server): void;
  stats(): ConnectionStats;
}

/**
 * Per-address cap on open sockets. `maxConnections` alone is one pool for everyone: one host
 * opening sockets fast (or holding them: kept alive, streams, slow headers) takes all of them.
 * Here a socket counts in its client's buckets — an IPv4 address; an IPv6 /64, /56 and /48, each
 * with its own cap, so a host rotating through the /64s of its /48 is bounded too — and one beyond
 * a bucket's cap is reset at accept: no byte read, no parser, no answer (a 503 written before the
 * request was read would often be lost to the reset anyway, and costs a write to the one client
 * being shed). The peer is the socket's: a trusted proxy (`TRUSTED_PROXIES`) carries many
 * clients, so its sockets are not capped here (only by `maxConnections`; the requests' caps still
 * key by the forwarded client).
 */
export function createConnectionCap(
  config: ConnectionCapConfig,
  trust: TrustedProxies,
  log?: Logger,
): ConnectionCap {
  const caps = [config.perAddress, config.perIpv6Slash56, config.perIpv6Slash48];
  const reasons: RefusalReason[] = ['address', 'ipv6_56', 'ipv6_48'];
  const isProxy = createProxyCheck(trust);
  const held = new Map<string, number>();
  const refused: Record<RefusalReason, number> = { address: 0, ipv6_56: 0, ipv6_48: 0, total: 0 };
  let open = 0;
  // Buckets whose refusals were logged, until they fall below their cap: one line an episode,
  // not one a socket (a flood must not flood the log too).
  const told = new Set<string>();

  /** The buckets a socket of `peer` counts in, each with the index of its cap and reason. */
  const bucketsOf = (peer: string | undefined): { key: string; tier: number }[] => {
    // A peer gone before accept has no address: it is closed already, nothing to key.
    if (peer === undefined || isProxy(peer)) return [];
    return clientKeys(peer)
      .map((key, tier) => ({ key, tier }))
      .filter(({ tier }) => (caps[tier] as number) > 0);
  };

  const admit = (peer: string | undefined): (() => void) | RefusalReason => {
    const buckets = bucketsOf(peer);
    const full = buckets.find(({ key, tier }) => (held.get(key) ?? 0) >= (caps[tier] as number));
    if (full) {
      const reason = reasons[full.tier] as RefusalReason;
      refused[reason] += 1;
      if (log && !told.has(full.key)) {
        told.add(full.key);
        log.warn(
          { client: full.key, reason, cap: caps[full.tier] },
          'connections refused at accept: the client holds its cap',
        );
      }
      return reason;
    }
    for (const { key } of buckets) held.set(key, (held.get(key) ?? 0) + 1);
    open += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      open -= 1;
      for (const { key, tier } of buckets) {
        const n = (held.get(key) ?? 1) - 1;
        if (n === 0) held.delete(key);
        else held.set(key, n);
        if (n < (caps[tier] as number)) told.delete(key);
      }
    };
  };

  const attach = (server: Server) => {
    // The server's own listeners (Node's HTTP parser) run only for a socket admitted: a refused
    // one is reset before a byte of it is read.
    const own = server.listeners('connection') as ((socket: Socket) => void)[];
    server.removeAllListeners('connection');
    server.on('connection', (socket: Socket) => {
      const admitted = admit(socket.remoteAddress);
      if (typeof admitted === 'string') {
        socket.resetAndDestroy();
        return;
      }
      socket.once('close', admitted);
      for (const listener of own) listener.call(server, socket);
    });
    server.on('drop', () => {
      refused.total += 1;
    });
  };

  return { admit, attach, stats: () => ({ open, refused: { ...refused } }) };
}
