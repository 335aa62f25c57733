import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createTestDatabase, type TestDatabase } from '@vault-yield/test-kit';
import {
  insertCatalogue,
  insertLedger,
  insertSnapshots,
  makeSnapshot,
  randomAddress,
  startReader,
  type TestReader,
  type Writer,
  writer,
} from '@vault-yield/test-kit/reader';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * @vault-yield/client as another project gets it: `npm pack` of packages/client, the tarball
 * installed into a scratch project in a temp dir, a TypeScript file there typechecked against the
 * packed `.d.ts` with this repository's tsc (strict), compiled, and run with node against a
 * running reader (real Postgres). A second file that passes a string where the API takes an
 * integer, or reads a ledger row's data without narrowing on its type, must not typecheck.
 */

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const CLIENT_DIR = fileURLToPath(new URL('../../../../packages/client/', import.meta.url));
const TSC = join(dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
const NPM_ENV = {
  ...process.env,
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    types: [],
    outDir: 'out',
  },
};

/** The consumer's program: every feature of the client, results printed as one JSON line. */
const MAIN = `import { ApiError, createClient, items, type LedgerRow, ok, pages } from '@vault-yield/client';

declare const process: { argv: string[] };
const [url, limitedUrl, owner, vault] = process.argv.slice(2) as [string, string, string, string];
const api = createClient(url);

const pageSizes: number[] = [];
for await (const page of pages(api.v1.vaults, { query: { owner, limit: 2 } })) pageSizes.push(page.length);

const snap = await ok(await api.v1.vault[':address'].snapshot.$get({ param: { address: vault } }));
const net: number = snap.netUsd;

const types: LedgerRow['type'][] = [];
const amounts: string[] = [];
for await (const row of items(api.v1.vault[':address'].events, { param: { address: vault }, query: { limit: 1 } })) {
  types.push(row.type);
  if (row.type === 'deposit' || row.type === 'withdrawal') amounts.push(row.data.amount);
  if (row.type === 'suspended') amounts.push(row.data.reason);
}
const deposits = await ok(
  await api.v1.vault[':address'].events.$get({ param: { address: vault }, query: { type: ['deposit'], limit: 10 } }),
);
const points = await ok(await api.v1.vault[':address'].equity.$get({ param: { address: vault }, query: { points: 5 } }));

let error = '';
try {
  await ok(await api.v1.vaults.$get({ query: { limit: 0 } }));
} catch (e) {
  if (e instanceof ApiError) error = \`\${e.status} \${e.code}\`;
}

// A reader limited to 1 request/s (burst 1): the 429s it answers are retried after their Retry-After.
const limited = createClient(limitedUrl, { retry: { retries: 3, maxDelayMs: 5000 } });
const started = Date.now();
const statuses: number[] = [];
for (let i = 0; i < 3; i++) statuses.push((await limited.v1.strategies.$get()).status);
const elapsedMs = Date.now() - started;

console.log(JSON.stringify({ pageSizes, net, status: snap.status, types, amounts, deposits: deposits.length, points: points.length, error, statuses, elapsedMs }));
`;

/** Misuses the compiler must refuse (each line names the error code expected). */
const BAD = `import { createClient, ok } from '@vault-yield/client';
const api = createClient('http://127.0.0.1:1');
await api.v1.vaults.$get({ query: { limit: '2' } }); // TS2322: limit is a number
const rows = await ok(await api.v1.tx[':hash'].$get({ param: { hash: '0x' } }));
export const amount: string = rows[0]!.data.amount; // TS2339: data depends on the row's type
await api.v1.vault[':address'].events.$get({ param: { address: '0x' }, query: { type: 'nope' } }); // TS2322: unknown type
`;

describe('the packed client in a scratch project', () => {
  let db: TestDatabase;
  let w: Writer;
  let r: TestReader;
  let limited: TestReader;
  let dir: string;
  const owner = randomAddress();
  const mine = Array.from({ length: 5 }, () => makeSnapshot({ owner }));
  const vault = mine[0]!.vault;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vault-yield-client-'));
    db = await createTestDatabase('packed-client');
    w = writer(db.writerUrl, db.schema);
    r = await startReader(db);
    limited = await startReader(db, {
      rateLimit: { ratePerSecond: 1, burst: 1, trustedProxies: { kind: 'none' } },
    });
    await insertSnapshots(w, mine);
    await insertCatalogue(w);
    await insertLedger(w, [
      { vault, type: 'deposit', blockNumber: 10, ts: 10_000 },
      { vault, type: 'withdrawal', blockNumber: 11, ts: 11_000 },
      { vault, type: 'suspended', blockNumber: 12, ts: 12_000 },
    ]);
  }, 180_000);
  afterAll(async () => {
    await limited?.stop();
    await r?.stop();
    await w?.end();
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('packs, installs, typechecks (and refuses misuse), and calls the reader', {
    timeout: 300_000,
  }, async () => {
    // npm pack: the prepack script builds dist (tsc -p tsconfig.build.json).
    const packDir = join(dir, 'pack');
    await mkdir(packDir);
    const packed = await run('npm', ['pack', '--json', '--pack-destination', packDir], {
      cwd: CLIENT_DIR,
      env: NPM_ENV,
      maxBuffer: 16 * 1024 * 1024,
    });
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as {
      filename: string;
      files: { path: string }[];
    }[];
    const files = info!.files.map((f) => f.path);
    expect(files).toEqual(
      expect.arrayContaining(['package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/types.d.ts']),
    );
    expect(files.filter((f) => /\.test\.|biome\.json|tsconfig/.test(f))).toEqual([]);

    // A scratch project that installs the tarball (the client has no dependencies: offline works).
    const app = join(dir, 'app');
    await mkdir(app);
    await writeFile(
      join(app, 'package.json'),
      JSON.stringify({ name: 'scratch', version: '1.0.0', private: true, type: 'module' }),
    );
    await run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(packDir, info!.filename)], {
      cwd: app,
      env: NPM_ENV,
    });
    const manifest = JSON.parse(
      await readFile(join(app, 'node_modules/@vault-yield/client/package.json'), 'utf8'),
    ) as {
      dependencies?: Record<string, string>;
      exports: unknown;
      private?: boolean;
      scripts?: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies ?? {})).toEqual([]);
    // Publishable, and nothing runs in a consumer's install (npm warns of install scripts):
    // the workspace builds it from the root postinstall, `npm pack` from prepack.
    expect(manifest.private).toBeUndefined();
    const installScripts = ['preinstall', 'install', 'postinstall', 'prepare'];
    expect(Object.keys(manifest.scripts ?? {}).filter((s) => installScripts.includes(s))).toEqual([]);

    await writeFile(join(app, 'main.ts'), MAIN);
    await writeFile(join(app, 'tsconfig.json'), JSON.stringify({ ...TSCONFIG, include: ['main.ts'] }));
    await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: app }).catch(
      (e: { stdout?: string }) => {
        throw new Error(`the scratch project does not typecheck:\n${e.stdout}`);
      },
    );

    await writeFile(join(app, 'bad.ts'), BAD);
    await writeFile(
      join(app, 'tsconfig.bad.json'),
      JSON.stringify({
        ...TSCONFIG,
        compilerOptions: { ...TSCONFIG.compilerOptions, noEmit: true },
        include: ['bad.ts'],
      }),
    );
    const refused = await run(process.execPath, [TSC, '-p', 'tsconfig.bad.json'], { cwd: app }).then(
      () => '',
      (e: { stdout?: string }) => e.stdout ?? '',
    );
    const errors = [...refused.matchAll(/bad\.ts\((\d+),\d+\): error (TS\d+)/g)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    expect(errors).toEqual(['3 TS2322', '5 TS2339', '6 TS2322']);

    const out = await run(process.execPath, ['out/main.js', r.url, limited.url, owner, vault], { cwd: app });
    const result = JSON.parse(out.stdout.trim()) as Record<string, unknown>;
    expect(result).toEqual({
      pageSizes: [2, 2, 1],
      net: expect.any(Number),
      status: mine[0]!.status,
      types: ['suspended', 'withdrawal', 'deposit'],
      amounts: [expect.any(String), expect.any(String), expect.any(String)],
      deposits: 1,
      points: 0,
      error: '400 invalid_request',
      statuses: [200, 200, 200],
      elapsedMs: expect.any(Number),
    });
    // Two of the three calls waited for a token (Retry-After: 1 s each).
    expect(result['elapsedMs']).toBeGreaterThanOrEqual(1500);
  });
});
