/**
 * A JSON-RPC recorder and replayer, for `bench:indexer` with `BENCH_NODE_REPLAY`: it prices the
 * indexer alone, as in production where the node runs on another machine, instead of the indexer
 * and anvil sharing this machine's two cores.
 *
 * Record: every call is forwarded to the node (anvil, on a static chain) and its answer kept by
 * `method` + `params`; the answers are written to the file when the process is told to stop
 * (SIGTERM). Replay: a call the file holds is answered from it (the node's own bytes, with the
 * request's id); any other is forwarded to the node and counted as a miss. The chain never moves
 * in the bench, so the same call has the same answer.
 *
 * Run as a child process (so its CPU is its own): `node --import tsx bench/rpc-replay.ts
 * record|replay <file> <node URL> [latency ms]`; prints `listening <url>` once it serves. A
 * latency delays every answer by that much, as a node across a network would (a provider is
 * commonly 5–50 ms away).
 */
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, openSync, writeSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { createInterface } from 'node:readline';

interface Call {
  jsonrpc?: string;
  id?: number | string | null;
  method: string;
  params?: unknown;
}

const [mode, file, upstream, latencyArg] = process.argv.slice(2);
const latencyMs = Number(latencyArg ?? 0);
if ((mode !== 'record' && mode !== 'replay') || !file || !upstream) {
  console.error('usage: rpc-replay.ts record|replay <file> <node URL> [latency ms]');
  process.exit(2);
}

/** Answers by call: `"result":…` or `"error":…` as the node wrote it (the JSON after the id). */
const answers = new Map<string, string>();
let hits = 0;
let misses = 0;

const keyOf = (c: Call) =>
  createHash('sha1')
    .update(`${c.method}\u0000${JSON.stringify(c.params ?? [])}`)
    .digest('base64');

const read = async (req: IncomingMessage): Promise<string> => {
  const parts: Buffer[] = [];
  for await (const b of req) parts.push(b as Buffer);
  return Buffer.concat(parts).toString('utf8');
};

/** Forwards calls to the node as one batch; returns each one's answer text, in order. */
async function forward(calls: Call[]): Promise<string[]> {
  const body = JSON.stringify(
    calls.map((c, i) => ({ jsonrpc: '2.0', id: i, method: c.method, params: c.params })),
  );
  const res = await fetch(upstream!, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const reply = (await res.json()) as unknown;
  // A node that refuses a whole batch answers with one error object: it is every call's answer.
  const parsed = (Array.isArray(reply) ? reply : []) as { id: number; result?: unknown; error?: unknown }[];
  const whole = Array.isArray(reply) ? undefined : (reply as { error?: unknown }).error;
  const out = new Array<string>(calls.length);
  for (const r of parsed)
    out[r.id] =
      'error' in r && r.error !== undefined
        ? `"error":${JSON.stringify(r.error)}`
        : `"result":${JSON.stringify(r.result ?? null)}`;
  const none = `"error":${JSON.stringify(whole ?? { code: -32603, message: 'the node gave no answer to this call' })}`;
  for (let i = 0; i < out.length; i++) out[i] ??= none;
  return out;
}

async function answer(calls: Call[]): Promise<string[]> {
  const keys = calls.map(keyOf);
  const out = keys.map((k) => (mode === 'replay' ? answers.get(k) : undefined));
  const missing = calls.filter((_, i) => out[i] === undefined);
  if (mode === 'replay') {
    hits += calls.length - missing.length;
    misses += missing.length;
  }
  if (missing.length > 0) {
    const got = await forward(missing);
    let j = 0;
    for (let i = 0; i < calls.length; i++) {
      if (out[i] !== undefined) continue;
      out[i] = got[j++]!;
      // Errors are not kept: a replay asks the node again (they are rare, and may be transient).
      if (!out[i]!.startsWith('"error"')) answers.set(keys[i]!, out[i]!);
    }
  }
  return out as string[];
}

const envelope = (c: Call, text: string) => `{"jsonrpc":"2.0","id":${JSON.stringify(c.id ?? null)},${text}}`;

async function main() {
  if (mode === 'replay') {
    const lines = createInterface({ input: createReadStream(file!), crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of lines) {
      const tab = line.indexOf('\t');
      if (tab > 0) answers.set(line.slice(0, tab), line.slice(tab + 1));
    }
  }
  const server = createServer((req, res) => {
    read(req)
      .then(async (body) => {
        const parsed = JSON.parse(body) as Call | Call[];
        const calls = Array.isArray(parsed) ? parsed : [parsed];
        const texts = await answer(calls);
        if (latencyMs > 0) await new Promise((r) => setTimeout(r, latencyMs));
        const out = Array.isArray(parsed)
          ? `[${calls.map((c, i) => envelope(c, texts[i]!)).join(',')}]`
          : envelope(calls[0]!, texts[0]!);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
        res.end(out);
      })
      .catch((err: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: String(err) } }));
      });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (typeof address === 'object' && address) console.log(`listening http://127.0.0.1:${address.port}`);
  });
  process.on('SIGTERM', () => {
    server.close();
    if (mode === 'record') {
      // Line by line: the answers together may be longer than a string can be.
      const fd = openSync(file!, 'w');
      for (const [k, v] of answers) writeSync(fd, `${k}\t${v}\n`);
      closeSync(fd);
    }
    console.log(`stopped: ${answers.size} answers kept; replayed ${hits}, forwarded ${misses}`);
    process.exit(0);
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
