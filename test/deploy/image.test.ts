import { type ChildProcess, exec, execSync, spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { dropDatabase, ensureProjectDatabase } from '@vault-yield/devstack/postgres';
import { KAFKAJS_PATCH_MARKER } from '@vault-yield/log';
import { kafkaBrokers, postgresAdminUrl } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  dockerignore,
  type Instruction,
  parseDockerfile,
  repoRoot,
  type Stage,
  stage,
  stagesOf,
} from './dockerfile.js';

/**
 * No container engine runs here, so this replays the image's build from infra/docker/Dockerfile's
 * own lines — its COPY set (through .dockerignore) and its RUN commands, parsed, not restated — in
 * a scratch directory standing for /app, then runs what the runtime target holds with plain `node`.
 * The npm commands run as written, with npm_config_prefer_offline (the machine's npm cache).
 */
const stages = parseDockerfile();
const ignored = dockerignore(readFileSync(join(repoRoot, '.dockerignore'), 'utf8'));
const scratch = mkdtempSync(join(tmpdir(), 'vault-yield-image-'));
const results = new Map<string, string>();
const runtimeMeta: { env: Record<string, string>; user?: string; entrypoint?: string[]; cmd?: string[] } = {
  env: {},
};

type ComposeService = {
  build?: { target?: string };
  command?: string[];
  environment?: Record<string, string | number>;
};
const compose = parse(readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
};

/** A path inside the image's /app, in the stage's scratch directory. */
function inApp(dir: string, path: string): string {
  const p = path.replace(/^\/app\/?/, '').replace(/^\.\/?/, '');
  return join(dir, p);
}

async function copyFromRepo(dir: string, i: Instruction): Promise<void> {
  const sources = i.args.slice(0, -1);
  const dest = i.args.at(-1)!;
  const intoDir = sources.length > 1 || dest.endsWith('/');
  for (const src of sources) {
    const from = join(repoRoot, src);
    expect(existsSync(from), `COPY ${src}: not in the repository`).toBe(true);
    expect(ignored(src), `COPY ${src} is excluded by .dockerignore`).toBe(false);
    const to =
      intoDir && !statSync(from).isDirectory() ? join(inApp(dir, dest), basename(src)) : inApp(dir, dest);
    await cp(from, to, {
      recursive: true,
      filter: (f) => !ignored(relative(repoRoot, f)),
    });
  }
}

/** Builds a stage in a scratch directory (its base stage's directory, built first, in place). */
async function replay(s: Stage): Promise<string> {
  const done = results.get(s.name);
  if (done) return done;
  const base = stages.find((x) => x.name === s.from);
  const dir = base ? await replay(base) : join(scratch, s.name);
  mkdirSync(dir, { recursive: true });
  for (const i of s.instructions) {
    if (i.op === 'WORKDIR') expect(i.args[0]).toBe('/app');
    else if (i.op === 'COPY' && i.flags.from) {
      const from = await replay(stage(stages, i.flags.from));
      const src = inApp(from, i.args[0]!);
      const dest = inApp(dir, i.args[1]!);
      // A whole stage's /app into an empty /app: moved, not copied (hundreds of MB).
      if (i.args[0] === '/app' && (!existsSync(dest) || readdirSync(dest).length === 0)) {
        rmSync(dest, { recursive: true, force: true });
        renameSync(src, dest);
        results.set(i.flags.from, dest);
      } else await cp(src, dest, { recursive: true, verbatimSymlinks: true });
    } else if (i.op === 'COPY') await copyFromRepo(dir, i);
    else if (i.op === 'RUN') {
      const started = Date.now();
      await run(i.raw, {
        cwd: dir,
        shell: '/bin/sh',
        maxBuffer: 64 * 2 ** 20,
        env: { ...process.env, npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false' },
      });
      console.log(`[image] RUN ${i.raw.slice(0, 60)}… ${((Date.now() - started) / 1000).toFixed(1)} s`);
    } else if (i.op === 'ENV') {
      const [k, v = ''] = i.raw.split('=');
      runtimeMeta.env[k!.trim()] = v.trim();
    } else if (i.op === 'USER') runtimeMeta.user = i.args[0];
    else if (i.op === 'ENTRYPOINT') runtimeMeta.entrypoint = i.args;
    else if (i.op === 'CMD') runtimeMeta.cmd = i.args;
    else if (i.op !== 'ARG') throw new Error(`replay: no rule for ${i.op} ${i.raw}`);
  }
  results.set(s.name, dir);
  return dir;
}

const run = promisify(exec);
const runtime = stages.at(-1)!;
let app = '';

function* files(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* files(p);
    else yield p;
  }
}
const du = (dir: string): number => {
  const out = execSync(`du -sk ${JSON.stringify(dir)}`, { encoding: 'utf8' });
  return Number(out.split(/\s/)[0]) * 1024;
};

/** The image's process: plain node, the image's ENV, nothing of this machine's environment but PATH. */
function runNode(args: string[], env: Record<string, string> = {}, timeout = 30_000) {
  return spawnSync(process.execPath, args, {
    cwd: app,
    encoding: 'utf8',
    timeout,
    env: { PATH: process.env.PATH ?? '', HOME: app, ...runtimeMeta.env, ...env },
  });
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

/**
 * The image runs Node 24, so its replay runs on Node 24: CI's last step (`npm run test:node24`)
 * and any machine on Node 24. On an older Node the replay would prove a runtime the image does not
 * have, at the suite's dearest cost (its `npm ci` alone ≈ 75 s), so it is skipped there, saying so.
 */
const imageNode = Number(process.versions.node.split('.')[0]) >= 24;

beforeAll(async () => {
  if (imageNode) app = await replay(runtime);
}, 420_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.skipIf(!imageNode)(
  `the image (infra/docker/Dockerfile replayed without an engine, on the Node it runs${imageNode ? '' : ` — skipped on Node ${process.versions.node}: \`npm run test:node24\` replays it`})`,
  () => {
    it('has the shape the deployment needs: Node 24, non-root, node as entrypoint, a chain target', () => {
      expect(runtime.name).toBe('runtime');
      expect(runtime.from).toMatch(/^node:24-bookworm-slim$/);
      expect(runtimeMeta.user && !['root', '0'].includes(runtimeMeta.user)).toBe(true);
      expect(runtimeMeta.entrypoint).toEqual(['node']);
      expect(existsSync(join(app, runtimeMeta.cmd![0]!)), runtimeMeta.cmd![0]).toBe(true);
      // anvil and the demo live in their own target, never in the runtime's stages.
      expect(stagesOf(stages, 'runtime').map((s) => s.name)).not.toContain('chain');
      const chain = stage(stages, 'chain');
      expect(chain.instructions.some((i) => i.op === 'COPY' && i.args.includes('infra/chain'))).toBe(true);
      const deps = stage(stages, 'deps');
      // Installed WITH scripts (the postinstall applies the kafkajs patch), patches/ copied first.
      const ci = deps.instructions.find((i) => i.op === 'RUN' && /\bnpm (ci|install)\b/.test(i.raw));
      expect(ci?.raw).not.toMatch(/--ignore-scripts|--omit=dev/);
      const copyPatches = deps.instructions.findIndex((i) => i.op === 'COPY' && i.args[0] === 'patches');
      expect(copyPatches).toBeGreaterThanOrEqual(0);
      expect(copyPatches).toBeLessThan(deps.instructions.indexOf(ci!));
    });

    it('ships kafkajs patched', () => {
      expect(readFileSync(join(app, 'node_modules/kafkajs/src/producer/sendMessages.js'), 'utf8')).toContain(
        KAFKAJS_PATCH_MARKER,
      );
    });

    it('runs JavaScript only: no TypeScript sources, no tsx or esbuild installed, no tsx launcher', () => {
      for (const pkg of ['tsx', 'esbuild', '@esbuild', '@foundry-rs/anvil', 'typescript/bin/tsc-never']) {
        if (pkg.endsWith('never')) continue;
        expect(existsSync(join(app, 'node_modules', pkg)), pkg).toBe(false);
      }
      const ts = [...files(join(app, 'packages')), ...files(join(app, 'services'))].filter(
        (f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.includes('/node_modules/'),
      );
      expect(ts.map((f) => relative(app, f))).toEqual([]);
      expect(readFileSync(join(app, 'services/indexer/src/publisher/boot.mjs'), 'utf8')).not.toContain('tsx');
      expect(readFileSync(join(app, 'services/cli/bin/vault-yield.js'), 'utf8')).not.toContain('tsx');
    });

    it('holds every file compose runs from the runtime target', () => {
      for (const [name, svc] of Object.entries(compose.services)) {
        if (svc.build?.target !== 'runtime') continue;
        expect(existsSync(join(app, svc.command![0]!)), `${name}: ${svc.command![0]}`).toBe(true);
      }
    });

    it.each(['indexer', 'projector', 'reader'])(
      'starts the %s from the result with node: a config error, exit 2',
      (name) => {
        const r = runNode([`services/${name}/src/main.js`]);
        expect(r.stderr).toContain('invalid configuration');
        expect(r.status).toBe(2);
      },
    );

    it('starts the cli from the result with node', () => {
      const r = runNode(['services/cli/bin/vault-yield.js']);
      expect(r.stderr + r.stdout).toContain('usage: vault-yield');
      expect(r.status).toBe(2);
    });

    it('makes the publisher in the image refuse an unpatched kafkajs, and start on the patched one', () => {
      const file = join(app, 'node_modules/kafkajs/src/producer/sendMessages.js');
      const patched = readFileSync(file, 'utf8');
      const script = `import { createPublisher } from '@vault-yield/log';
      const p = await createPublisher({ brokers: ${JSON.stringify(kafkaBrokers())}, clientId: 'image-test', topic: 'none' });
      await p.close(); console.log('publisher started');`;
      try {
        writeFileSync(
          file,
          patched
            .split('\n')
            .filter((l) => !l.includes(KAFKAJS_PATCH_MARKER))
            .join('\n'),
        );
        const refused = runNode(['--input-type=module', '-e', script]);
        expect(refused.stderr).toContain('kafkajs is not patched');
        expect(refused.status).not.toBe(0);
      } finally {
        writeFileSync(file, patched);
      }
      const started = runNode(['--input-type=module', '-e', script]);
      expect(started.stdout + started.stderr).toContain('publisher started');
    });

    it('migrates, points the views schema, and serves the reader on it from the result (local Postgres)', async () => {
      const admin = postgresAdminUrl();
      const database = `t_image_${process.pid}`;
      const db = await ensureProjectDatabase(admin, database);
      let reader: ChildProcess | undefined;
      try {
        const envOf = (svc: string, url: string) =>
          Object.fromEntries(
            Object.entries({ ...compose.services[svc]!.environment, DATABASE_URL: url }).map(([k, v]) => [
              k,
              String(v),
            ]),
          );
        const migrate = runNode(compose.services.migrate!.command!, envOf('migrate', db.writerUrl), 120_000);
        expect(migrate.status, migrate.stderr).toBe(0);
        const views = runNode(compose.services.views!.command!, envOf('views', db.writerUrl));
        expect(views.status, views.stderr).toBe(0);
        expect(views.stdout).toContain('vault_yield_api → vault_yield');
        const again = runNode(compose.services.views!.command!, envOf('views', db.writerUrl));
        expect(again.stdout).toContain('already points at vault_yield');

        const port = await freePort();
        const env = {
          ...envOf('reader', db.readerUrl),
          HOST: '127.0.0.1',
          PORT: String(port),
          LOG_LEVEL: 'warn',
        };
        reader = spawn(process.execPath, compose.services.reader!.command!, {
          cwd: app,
          env: { PATH: process.env.PATH ?? '', HOME: app, ...runtimeMeta.env, ...env },
          stdio: 'ignore',
        });
        const base = `http://127.0.0.1:${port}`;
        let ready = 0;
        for (let t = 0; t < 100 && ready !== 200; t++) {
          ready = await fetch(`${base}/ready`).then(
            (r) => r.status,
            () => 0,
          );
          if (ready !== 200) await new Promise((r) => setTimeout(r, 200));
        }
        expect(ready).toBe(200);
        const vaults = await fetch(`${base}/v1/vaults`);
        expect(vaults.status).toBe(200);
        const script = await fetch(`${base}/dashboard/app.js`);
        expect(script.status).toBe(200);
        expect(await script.text()).toBe(
          readFileSync(join(app, 'services/reader/src/dashboard/app/app.js'), 'utf8'),
        );
        expect((await fetch(`${base}/dashboard`)).status).toBe(200);
        // Scalar's bundle, from the copy the build made (its package is not in the image).
        const scalar = await fetch(`${base}/docs/scalar.js`);
        expect(scalar.status).toBe(200);
        expect(
          Buffer.from(await scalar.arrayBuffer()).equals(
            readFileSync(join(app, 'services/reader/src/openapi/scalar-standalone.js')),
          ),
        ).toBe(true);
      } finally {
        reader?.kill('SIGTERM');
        await dropDatabase(admin, database).catch(() => {});
      }
    }, 180_000);

    it('reports the figures an image size depends on; ships Scalar as one copied bundle, not its packages', () => {
      const ls = spawnSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], {
        cwd: app,
        encoding: 'utf8',
      });
      const prod = new Set(ls.stdout.split('\n').filter((l) => l.includes('/node_modules/')));
      const nodeModules = du(join(app, 'node_modules'));
      const code = du(join(app, 'packages')) + du(join(app, 'services')) + du(join(app, 'deploy'));
      const bundle = join(app, 'services/reader/src/openapi/scalar-standalone.js');
      console.log(
        `[image] production dependencies: ${prod.size}; node_modules ${(nodeModules / 2 ** 20).toFixed(1)} MiB; compiled workspace ${(code / 2 ** 20).toFixed(1)} MiB; scalar bundle ${(du(bundle) / 2 ** 20).toFixed(1)} MiB`,
      );
      expect(prod.size).toBeGreaterThan(0);
      // @scalar/api-reference brought ≈ 276 packages and 155 MiB for one 4 MB file.
      const scalarDir = join(app, 'node_modules/@scalar');
      expect(existsSync(scalarDir) ? readdirSync(scalarDir) : []).toEqual([]);
      expect(existsSync(bundle)).toBe(true);
    });
  },
);

/** A container engine, when one answers. */
const engine = spawnSync('docker', ['info'], { encoding: 'utf8', timeout: 15_000 }).status === 0;

describe('the image and compose on a container engine', () => {
  it.skipIf(!engine)(
    'builds the image, runs `docker compose up` with the demo, and the dashboard serves data (skipped: no container engine answers `docker info` on this machine)',
    async () => {
      const envDir = mkdtempSync(join(tmpdir(), 'vault-yield-compose-'));
      const envFile = join(envDir, '.env');
      cpSync(join(repoRoot, 'infra/docker/.env.example'), envFile);
      const dc = (args: string[]) =>
        execSync(['docker', 'compose', '--env-file', envFile, '-p', 'vault-yield-test', ...args].join(' '), {
          cwd: repoRoot,
          stdio: 'inherit',
        });
      try {
        dc(['build']);
        dc(['up', '-d', '--wait']);
        let vaults: unknown[] = [];
        for (let t = 0; t < 120 && vaults.length === 0; t++) {
          const body = (await fetch('http://127.0.0.1:8080/v1/vaults').then(
            (r) => r.json(),
            () => ({}),
          )) as {
            data?: unknown[];
          };
          vaults = body.data ?? [];
          if (vaults.length === 0) await new Promise((r) => setTimeout(r, 1000));
        }
        expect(vaults.length).toBeGreaterThan(0);
        expect((await fetch('http://127.0.0.1:8080/dashboard')).status).toBe(200);
      } finally {
        dc(['down', '-v']);
        rmSync(envDir, { recursive: true, force: true });
      }
    },
    1_800_000,
  );
});
