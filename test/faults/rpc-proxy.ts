import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A misbehaving JSON-RPC endpoint: an HTTP proxy in front of a real node (anvil), on loopback,
 * that answers some requests the way real providers misbehave instead of forwarding them.
 */

interface Call {
  jsonrpc: '2.0';
  id: number | string | null;
  method: string;
  params?: unknown[];
}

export type Fault =
  /** HTTP error status with headers and a text body (429 + Retry-After, 502, 503). */
  | { kind: 'status'; status: number; headers?: Record<string, string>; body?: string }
  /** Never answers; the connection is dropped after `ms` (the client should time out first). */
  | { kind: 'hang'; ms: number }
  /** Answered by a second node `behind` blocks behind the head (same chain, not yet synced). */
  | { kind: 'lagging'; behind: number }
  /** Forwarded once `run` has done something to the chain first (a reorg just before a read). */
  | { kind: 'before'; run: () => Promise<void> }
  /** Every call answered with this JSON-RPC error (HTTP 200), as a node refusing the call does. */
  | { kind: 'error'; code: number; message: string };

export interface ProxyStats {
  requests: number;
  /** Faults served, by name. */
  served: Map<string, number>;
  /** For each rate-limited call answered again later: ms between the 429 and its retry. */
  retryGapsMs: number[];
  /** The call (method and params, cut short) of each gap, for messages. */
  retryGapCalls: string[];
  /**
   * 429s whose client gave up on the request before reading the answer (its time-out closed the
   * connection): it never saw that Retry-After, so its next copy of the call is not a retry of it.
   */
  abandoned429: number;
}

export interface RpcProxy {
  url: string;
  stats: ProxyStats;
  close(): Promise<void>;
}

export interface ProxyOptions {
  upstream: string;
  /** Decides the fault (if any) for the n-th HTTP request (1-based) carrying these calls. */
  fault: (n: number, calls: readonly Call[]) => Fault | null;
  /**
   * eth_getLogs over more than this many blocks is refused, alternating two providers' wordings
   * (Infura: -32005 "query returned more than 10000 results"; others: "block range is too large").
   */
  maxLogsRange: number;
}

const hex = (n: number) => `0x${n.toString(16)}`;
const num = (v: unknown): number | null =>
  typeof v === 'string' && v.startsWith('0x') ? Number.parseInt(v, 16) : null;

/** A call's identity without its id: the same call retried has the same key. */
const keyOf = (c: Call) => JSON.stringify([c.method, c.params ?? []]);

export async function startRpcProxy(o: ProxyOptions): Promise<RpcProxy> {
  const stats: ProxyStats = {
    requests: 0,
    served: new Map(),
    retryGapsMs: [],
    retryGapCalls: [],
    abandoned429: 0,
  };
  const limitedAt = new Map<string, number>();
  let refusals = 0;
  const count = (name: string) => stats.served.set(name, (stats.served.get(name) ?? 0) + 1);

  async function upstream(calls: Call[]): Promise<unknown[]> {
    const res = await fetch(o.upstream, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(calls),
    });
    return (await res.json()) as unknown[];
  }
  const head = async () =>
    num(
      ((await upstream([{ jsonrpc: '2.0', id: 0, method: 'eth_blockNumber' }]))[0] as { result: string })
        .result,
    ) ?? 0;

  /** The number of a block named by hash (EIP-1898 `{ blockHash }` or a bare hash); null if none. */
  const numberOfHash = async (hash: unknown): Promise<number | null> => {
    if (typeof hash !== 'string') return null;
    const b = (
      await upstream([{ jsonrpc: '2.0', id: 0, method: 'eth_getBlockByHash', params: [hash, false] }])
    )[0] as {
      result: { number: string } | null;
    };
    return b.result ? num(b.result.number) : null;
  };
  const refuse = (c: Call, message: string) => ({
    jsonrpc: '2.0',
    id: c.id,
    error: { code: -32000, message },
  });

  /**
   * What a node `behind` blocks behind answers (geth-like): clamps log ranges past its head to the
   * blocks it has (short, no error), null for headers beyond it, "header not found" for a call at
   * a block beyond it (by number or hash), "unknown block" for logs of a block hash it lacks.
   */
  async function lagging(calls: Call[], behind: number): Promise<unknown[]> {
    const its = Math.max(0, (await head()) - behind);
    const out: unknown[] = [];
    for (const c of calls) {
      const p = c.params ?? [];
      const byHash = (p[1] as { blockHash?: unknown } | undefined)?.blockHash;
      if (
        c.method === 'eth_call' &&
        byHash !== undefined &&
        ((await numberOfHash(byHash)) ?? its + 1) > its
      ) {
        count('lagging: eth_call beyond its head');
        out.push(refuse(c, 'header not found'));
        continue;
      }
      if (c.method === 'eth_getBlockByHash' && ((await numberOfHash(p[0])) ?? its + 1) > its) {
        count('lagging: block beyond its head');
        out.push({ jsonrpc: '2.0', id: c.id, result: null });
        continue;
      }
      const logsHash = (p[0] as { blockHash?: unknown } | undefined)?.blockHash;
      if (c.method === 'eth_getLogs' && logsHash !== undefined) {
        if (((await numberOfHash(logsHash)) ?? its + 1) > its) {
          count('lagging: getLogs by hash beyond its head');
          out.push(refuse(c, 'unknown block'));
        } else out.push(...(await upstream([c])));
        continue;
      }
      if (c.method === 'eth_blockNumber') {
        out.push({ jsonrpc: '2.0', id: c.id, result: hex(its) });
        continue;
      }
      if (c.method === 'eth_getBlockByNumber' && (num(p[0]) ?? 0) > its) {
        count('lagging: block beyond its head');
        out.push({ jsonrpc: '2.0', id: c.id, result: null });
        continue;
      }
      if (c.method === 'eth_getLogs') {
        const f = { ...(p[0] as Record<string, unknown>) };
        const from = num(f.fromBlock) ?? 0;
        const to = num(f.toBlock) ?? its;
        if (from > its) {
          count('lagging: getLogs beyond its head');
          out.push({ jsonrpc: '2.0', id: c.id, result: [] });
          continue;
        }
        if (to > its) {
          count('lagging: getLogs beyond its head');
          f.toBlock = hex(its);
        }
        out.push(...(await upstream([{ ...c, params: [f] }])));
        continue;
      }
      if (c.method === 'eth_call' && (num(p[1]) ?? 0) > its) {
        count('lagging: eth_call beyond its head');
        out.push(refuse(c, 'header not found'));
        continue;
      }
      out.push(...(await upstream([c])));
    }
    return out;
  }

  function refusal(c: Call): unknown | null {
    if (c.method !== 'eth_getLogs') return null;
    const f = (c.params?.[0] ?? {}) as Record<string, unknown>;
    const from = num(f.fromBlock);
    const to = num(f.toBlock);
    if (from === null || to === null || to - from + 1 <= o.maxLogsRange) return null;
    refusals++;
    count('getLogs refused');
    return refusals % 2
      ? {
          jsonrpc: '2.0',
          id: c.id,
          error: { code: -32005, message: 'query returned more than 10000 results' },
        }
      : { jsonrpc: '2.0', id: c.id, error: { code: -32600, message: 'block range is too large' } };
  }

  let arrivals = 0;
  const limitedSeq = new Map<string, number>();
  const watching = new WeakMap<object, () => void>();
  async function handle(req: IncomingMessage, res: ServerResponse) {
    const seq = ++arrivals;
    watching.get(req.socket)?.();
    watching.delete(req.socket);
    const t0 = Date.now();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Call | Call[];
    const calls = Array.isArray(body) ? body : [body];
    const n = ++stats.requests;
    const now = Date.now();
    for (const c of calls) {
      const at = limitedAt.get(keyOf(c));
      if (at !== undefined) {
        stats.retryGapsMs.push(now - at);
        stats.retryGapCalls.push(
          `[#${seq} after the 429'd #${limitedSeq.get(keyOf(c))}, body read ${now - t0} ms] ${keyOf(c).slice(0, 120)}`,
        );
        limitedAt.delete(keyOf(c));
      }
    }
    const fault = o.fault(n, calls);
    if (fault?.kind === 'status') {
      count(`HTTP ${fault.status}`);
      if (fault.status === 429) {
        for (const c of calls) {
          limitedAt.set(keyOf(c), now);
          limitedSeq.set(keyOf(c), seq);
        }
        // A client that timed out closes the connection instead of reading the answer.
        const abandoned = () => {
          let any = false;
          for (const c of calls)
            if (limitedSeq.get(keyOf(c)) === seq && limitedAt.delete(keyOf(c))) any = true;
          if (any) stats.abandoned429++;
        };
        // Until the connection carries another request (the answer was read) or a keep-alive
        // close could be meant (after Retry-After), a close is a give-up.
        const socket = req.socket;
        const stop = () => socket.off('close', abandoned);
        socket.once('close', abandoned);
        watching.set(socket, stop);
        setTimeout(stop, 1_000);
      }
      res.writeHead(fault.status, { 'content-type': 'text/plain', ...fault.headers });
      res.end(fault.body ?? '');
      return;
    }
    if (fault?.kind === 'hang') {
      count('hang');
      setTimeout(() => req.socket.destroy(), fault.ms);
      return;
    }
    if (fault?.kind === 'error') {
      count(`error ${fault.code}`);
      const answers = calls.map((c) => ({
        jsonrpc: '2.0',
        id: c.id,
        error: { code: fault.code, message: fault.message },
      }));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(Array.isArray(body) ? answers : answers[0]));
      return;
    }
    if (fault?.kind === 'before') {
      count('before');
      await fault.run();
    }
    const refused = calls.map(refusal);
    let answers: unknown[];
    if (refused.every((r) => r !== null)) answers = refused;
    else if (fault?.kind === 'lagging') {
      count('lagging node');
      answers = await lagging(calls, fault.behind);
    } else answers = await upstream(calls);
    // A refused getLogs inside a batch keeps its refusal; the rest are the node's answers.
    answers = answers.map((a, i) => refused[i] ?? a);
    const out = JSON.stringify(Array.isArray(body) ? answers : answers[0]);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(out);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(err));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stats,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
