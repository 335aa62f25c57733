import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { expect } from 'vitest';
import type { CliResult } from '../cli/run.js';

/**
 * The README's *Operators* path (#48 "what done looks like"), shared by the stacks it is run on:
 * `npm start` (test/dev/operator-path.test.ts) and the compose services run from the replayed
 * image (test/deploy/image.test.ts). The block between `operator-path:begin` and `:end` in
 * README.md is parsed here once; `walkOperatorPath` runs its commands in their order against a
 * running stack while two clients read every vault, `/v1/vaults` and `/ready` throughout.
 */
const README = fileURLToPath(new URL('../../README.md', import.meta.url));

export interface ReadmePath {
  /** The variables the block's `export` line sets (the operators' environment). */
  exported: string[];
  /** Each `npx vault-yield …` line's arguments, comments dropped. */
  commands: string[][];
}

/** The README's operator lines: the environment line and the commands, comments dropped. */
export async function readmePath(): Promise<ReadmePath> {
  const text = await readFile(README, 'utf8');
  const block = /<!-- operator-path:begin -->\n```sh\n([\s\S]*?)```\n<!-- operator-path:end -->/.exec(text);
  if (!block?.[1]) throw new Error('README.md has no operator-path block');
  const lines = block[1]
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l && !l.startsWith('#'));
  const exportLine = lines.find((l) => l.startsWith('export '));
  if (!exportLine) throw new Error('the operator-path block exports no environment');
  return {
    exported: exportLine
      .slice('export '.length)
      .split(/\s+/)
      .map((kv) => kv.split('=')[0]!),
    commands: lines
      .filter((l) => l.startsWith('npx vault-yield '))
      .map((l) => l.slice('npx vault-yield '.length).split(/\s+/)),
  };
}

/** A running stack the path is walked on. */
export interface OperatorStack {
  /** The reader's base URL (no trailing slash). */
  url: string;
  /** The migrator's URL: where `verify`'s scratch schemas would be left. */
  migrateDatabaseUrl: string;
  /**
   * Runs one README command (its arguments as written) in `cwd`, with the operators' environment;
   * `npx vault-yield` of the stack (the repository's, or the image's CLI).
   */
  cli: (args: string[], cwd: string) => Promise<CliResult>;
  /** A README argument as this stack names it (the test's own topic prefix for `dev-` topics). */
  name?: (arg: string) => string;
  /** Sends one deposit into `depositVault` (new chain activity); resolves once the node took it. */
  deposit: () => Promise<void>;
  /** The vault `deposit` deposits into. */
  depositVault: string;
  /** Told the topic each `reindex` cuts (to be deleted with the test's others). */
  onTopic?: (topic: string) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Walks the README's operator path on `stack`, with reads running throughout. After each command:
 * it exited 0 in one piece of output (no stack trace); a switch (`rebuild`, `reindex`) left every
 * snapshot as it was (the chain is quiet) and the stack serves the deposit sent after it; `verify`
 * found no difference and left no scratch schema; `retire` advised dropping nothing in use; the
 * published catalogue entry is served. In the end not one read failed.
 */
export async function walkOperatorPath(stack: OperatorStack, path: ReadmePath): Promise<{ reads: number }> {
  const { url } = stack;
  const name = stack.name ?? ((a: string) => a);
  let vaults: string[] = [];
  for (let i = 0; vaults.length < 3; i++) {
    if (i > 240) throw new Error('the demo vaults never showed');
    vaults = ((await (await fetch(`${url}/v1/vaults`)).json()) as { vault: string }[]).map((v) => v.vault);
    if (vaults.length < 3) await sleep(500);
  }
  const first = stack.depositVault.toLowerCase();
  const snapshots = async () =>
    Object.fromEntries(
      await Promise.all(
        vaults.map(async (v) => [v, await (await fetch(`${url}/v1/vault/${v}/snapshot`)).json()] as const),
      ),
    );
  const deposits = async () =>
    ((await (await fetch(`${url}/v1/vault/${first}/events?type=deposit&limit=500`)).json()) as unknown[])
      .length;
  /** Quiet: every snapshot stays the same for 3 s (the projector has folded what there is). */
  const settled = async () => {
    let last = JSON.stringify(await snapshots());
    for (let quiet = 0; quiet < 6; ) {
      await sleep(500);
      const now = JSON.stringify(await snapshots());
      quiet = now === last ? quiet + 1 : 0;
      last = now;
    }
    return JSON.parse(last) as Record<string, unknown>;
  };

  // Two clients read every vault, the list and /ready for the whole path.
  let reading = true;
  let reads = 0;
  const failures: string[] = [];
  const reader = async () => {
    while (reading) {
      for (const p of [
        '/v1/vaults',
        '/ready',
        ...vaults.flatMap((v) => [`/v1/vault/${v}/snapshot`, `/v1/vault/${v}/events?limit=5`]),
      ]) {
        const res = await fetch(`${url}${p}`).catch((err: Error) => ({
          status: 0,
          text: async () => err.message,
        }));
        reads++;
        if (res.status !== 200) failures.push(`${p}: ${res.status} ${(await res.text()).slice(0, 200)}`);
      }
    }
  };
  const readers = [reader(), reader()];

  const work = await mkdtemp(join(tmpdir(), 'operator-path-'));
  const admin = new pg.Client({ connectionString: stack.migrateDatabaseUrl });
  await admin.connect();
  try {
    for (const written of path.commands) {
      const args = written.map(name);
      const what = written.join(' ');
      const switches = (args[0] === 'rebuild' && args.length === 1) || args[0] === 'reindex';
      const before = switches ? await settled() : null;
      const depositsBefore = await deposits();
      if (args[0] === 'publish') {
        await writeFile(
          join(work, args[2]!),
          JSON.stringify({
            schemaVersion: 1,
            publishedAt: Date.now(),
            strategies: [
              {
                id: 'operator-path',
                name: 'Operator path',
                description: 'Published by the README path.',
                riskNote: 'None: a test.',
              },
            ],
          }),
        );
      }
      if (args[0] === 'reindex') stack.onTopic?.(args[2]!);
      const r = await stack.cli(args, work);
      expect(r.code, `${what}\n${r.stdout}\n${r.stderr}`).toBe(0);
      expect(`${r.stdout}${r.stderr}`, what).not.toMatch(/^\s+at /m);

      if (args[0] === 'verify') {
        expect(r.stdout, what).toMatch(/\b0 differences\b|no difference/i);
        const left = await admin.query(
          `select nspname from pg_namespace where nspname like 'vault_yield_verify%'`,
        );
        expect(left.rows, what).toEqual([]);
      }
      if (args[0] === 'rebuild' && args[1] === 'retire') {
        expect(r.stdout, what).not.toMatch(/drop it by hand/);
      }
      if (args[0] === 'publish') {
        for (let i = 0; ; i++) {
          const list = (await (await fetch(`${url}/v1/strategies`)).json()) as { id: string }[];
          if (Array.isArray(list) && list.some((s) => s.id === 'operator-path')) break;
          if (i > 120)
            throw new Error(`the published catalogue never reached /v1/strategies: ${JSON.stringify(list)}`);
          await sleep(250);
        }
      }
      if (before) {
        // The switch moved nothing a user sees (the chain was quiet) …
        expect(await settled(), `${what}: snapshots after the switch`).toEqual(before);
        // … and the stack serves what the chain does next: a deposit, sent now.
        await stack.deposit();
        for (let i = 0; (await deposits()) <= depositsBefore; i++) {
          if (i > 240) throw new Error(`${what}: the deposit never reached the API`);
          await sleep(250);
        }
      }
    }
  } finally {
    reading = false;
    await Promise.all(readers);
    await admin.end();
    await rm(work, { recursive: true, force: true });
  }
  expect(reads).toBeGreaterThan(100);
  expect(failures.slice(0, 10)).toEqual([]);
  return { reads };
}

/** The JSON-RPC body and URL of a `curl … -d '<body>' <url>` line (`npm start`'s `deposit:`). */
export function parseCurl(line: string): { body: string; rpcUrl: string } {
  const m = /curl -s -H 'content-type: application\/json' -d '(.+)' (\S+)$/.exec(line);
  if (!m?.[1] || !m[2]) throw new Error(`not a deposit curl line: ${line}`);
  return { body: m[1], rpcUrl: m[2] };
}

/** Sends one JSON-RPC request; fails the test on a JSON-RPC error. */
export async function sendRpc(rpcUrl: string, body: string): Promise<void> {
  const sent = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  expect(((await sent.json()) as { error?: unknown }).error).toBeUndefined();
}
