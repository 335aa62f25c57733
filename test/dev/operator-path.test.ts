import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogAdmin } from '@vault-yield/log';
import { kafkaBrokers } from '@vault-yield/test-kit';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type CliResult, runCli } from '../cli/run.js';
import { dropDevDatabases, startDev, waitExit } from './support.js';

/**
 * The README's *Operators* path, run as written against `npm start` (#48 "what done looks like"):
 * the lines between `operator-path:begin` and `:end` in README.md, in their order, with the
 * environment `npm start` prints on its `operators:` line and nothing else — while two clients
 * read every vault, `/v1/vaults` and `/ready` throughout. After each command: it exited 0 in one
 * piece of output (no stack trace); a switch left every snapshot as it was (the chain is quiet:
 * `--no-live`); a deposit sent as the `deposit:` line says reaches the API; and in the end not
 * one read failed, `verify` found no difference and left no scratch schema, `retire` advised
 * dropping nothing in use, and the published catalogue entry is served.
 *
 * The one liberty: the demo's topics carry this test's own prefix (DEV_KAFKA_PREFIX), so a
 * README line's `dev-` topic is the same topic under that prefix.
 */
const README = fileURLToPath(new URL('../../README.md', import.meta.url));

/** The README's operator lines: the environment line and the commands, comments dropped. */
async function readmePath(): Promise<{ exported: string[]; commands: string[][] }> {
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

/** `NAME=value …` of the `operators:` line `npm start` printed. */
function operatorsLine(out: string): Record<string, string> {
  const m = /^operators: export (.+)$/m.exec(out);
  if (!m?.[1]) throw new Error(`npm start printed no operators: line:\n${out.slice(-3000)}`);
  return Object.fromEntries(
    m[1].split(' ').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

/** The JSON-RPC body and URL of the `deposit:` line's curl. */
function depositLine(out: string): { body: string; rpcUrl: string } {
  const m = /^deposit:\s+curl -s -H 'content-type: application\/json' -d '(.+)' (\S+)$/m.exec(out);
  if (!m?.[1] || !m[2]) throw new Error(`npm start printed no deposit: line:\n${out.slice(-3000)}`);
  return { body: m[1], rpcUrl: m[2] };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the README's operator path on npm start", () => {
  const prefix = `op${randomBytes(3).toString('hex')}`;
  const topics: string[] = [];
  let work: string | undefined;
  afterAll(async () => {
    const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'operator-path-test' });
    for (const t of topics) await admin.deleteTopic(t).catch(() => {});
    await admin.close();
    if (work) await rm(work, { recursive: true, force: true });
    await dropDevDatabases();
  });

  it('rebuild ×2, verify, reindex, verify, status, retire, publish: no read fails, nothing moves, new activity is served', async () => {
    // Every client of this test reads from one address: the per-client limits are off, so a 429
    // (by design under load from one address) is never taken for a failure of a switch.
    const dev = startDev(undefined, ['--no-live'], {
      DEV_KAFKA_PREFIX: prefix,
      RATE_LIMIT_RPS: '0',
      CLIENT_CONCURRENCY: '0',
    });
    try {
      const url = await dev.ready;
      for (let i = 0; !/^operators: /m.test(dev.out()); i++) {
        if (i > 100) throw new Error('no operators: line');
        await sleep(100);
      }
      const env = operatorsLine(dev.out());
      const deposit = depositLine(dev.out());
      const path = await readmePath();
      // The README's environment is the line npm start prints: the same variables, no other.
      expect(Object.keys(env).sort()).toEqual([...path.exported].sort());
      topics.push(`${prefix}-vault-records`, `${prefix}-screen-results`, `${prefix}-strategy-catalogue`);

      let vaults: string[] = [];
      for (let i = 0; vaults.length < 3; i++) {
        if (i > 240) throw new Error('the demo vaults never showed');
        vaults = ((await (await fetch(`${url}/v1/vaults`)).json()) as { vault: string }[]).map(
          (v) => v.vault,
        );
        if (vaults.length < 3) await sleep(500);
      }
      const first = JSON.parse(deposit.body).params[0].to as string;
      const snapshots = async () =>
        Object.fromEntries(
          await Promise.all(
            vaults.map(
              async (v) => [v, await (await fetch(`${url}/v1/vault/${v}/snapshot`)).json()] as const,
            ),
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
          for (const path of [
            '/v1/vaults',
            '/ready',
            ...vaults.flatMap((v) => [`/v1/vault/${v}/snapshot`, `/v1/vault/${v}/events?limit=5`]),
          ]) {
            const res = await fetch(`${url}${path}`).catch((err: Error) => ({
              status: 0,
              text: async () => err.message,
            }));
            reads++;
            if (res.status !== 200)
              failures.push(`${path}: ${res.status} ${(await res.text()).slice(0, 200)}`);
          }
        }
      };
      const readers = [reader(), reader()];

      work = await mkdtemp(join(tmpdir(), 'operator-path-'));
      const cli = (args: string[]): Promise<CliResult> =>
        runCli(
          args.map((a) => a.replace(/^dev-/, `${prefix}-`)),
          { ...env, LOG_FORMAT: 'json' },
          300_000,
          work,
        );
      const admin = new pg.Client({ connectionString: env.MIGRATE_DATABASE_URL });
      await admin.connect();
      try {
        for (const args of path.commands) {
          const what = args.join(' ');
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
          if (args[0] === 'reindex') topics.push(args[2]!.replace(/^dev-/, `${prefix}-`));
          const r = await cli(args);
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
                throw new Error(
                  `the published catalogue never reached /v1/strategies: ${JSON.stringify(list)}`,
                );
              await sleep(250);
            }
          }
          if (before) {
            // The switch moved nothing a user sees (the chain was quiet) …
            expect(await settled(), `${what}: snapshots after the switch`).toEqual(before);
            // … and the stack serves what the chain does next: the deposit line, sent now.
            const sent = await fetch(deposit.rpcUrl, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: deposit.body,
            });
            expect(((await sent.json()) as { error?: unknown }).error, what).toBeUndefined();
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
      }
      expect(reads).toBeGreaterThan(100);
      expect(failures.slice(0, 10)).toEqual([]);
    } finally {
      dev.child.kill('SIGINT');
      await waitExit(dev, 60_000);
    }
  }, 900_000);
});
