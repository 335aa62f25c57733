import { type ChildProcess, exec, execSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
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
import { demoCatalogue, demoScreen } from '@vault-yield/cli/dev/strategy';
import { deployReferenceStack, devChain, playDemoScenario, startAnvil } from '@vault-yield/devstack/chain';
import { dropDatabase, ensureProjectDatabase } from '@vault-yield/devstack/postgres';
import { createLogAdmin, createPublisher, KAFKAJS_PATCH_MARKER } from '@vault-yield/log';
import { kafkaBrokers, postgresAdminUrl } from '@vault-yield/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { CliResult } from '../cli/run.js';
import { readmePath, sendRpc, walkOperatorPath } from '../dev/readme-path.js';
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
  restart?: string;
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
      expect(runtime.from).toMatch(/^node:24-bookworm-slim@sha256:[0-9a-f]{64}$/); // pinned by digest
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

    it.each(['indexer', 'projector', 'reader', 'webhooks'])(
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

    it("walks the README's operator path on compose's services, run from the result: no read fails, nothing moves, new activity is served", async () => {
      // compose's layout on the local Postgres (a database of this test's own, the roles as
      // infra/postgres/docker-init makes them: the migrator owns it, the writer has DML, the reader
      // reads), the broker at KAFKA_BROKERS, an anvil with the demo played (compose's `demo`), and
      // the services as docker-compose.yml runs them: its commands and environment, hosts and
      // passwords mapped to this machine. The one liberty, as on npm start: the topics and groups
      // carry this test's own prefix, so a README line's `dev-` topic is the same one under it.
      const hex = randomBytes(3).toString('hex');
      const prefix = `img${hex}`;
      const database = `t_image_op_${hex}`;
      const admin = postgresAdminUrl();
      const topics = [`${prefix}-vault-records`, `${prefix}-screen-results`, `${prefix}-strategy-catalogue`];
      const running = new Map<string, ChildProcess>();
      const logs = new Map<string, string>();
      const exits: string[] = [];
      let stopping = false;
      let walking = false;
      const [db, anvil] = await Promise.all([
        ensureProjectDatabase(admin, database, { split: true }),
        startAnvil(),
      ]);
      try {
        const stack = await deployReferenceStack(anvil.rpcUrl);
        // compose's FACTORY_ADDRESS (its demo's and its indexer's) is where the demo's deployer
        // puts the factory on a fresh anvil: the indexer of a compose stack watches the factory.
        for (const svc of ['demo', 'indexer'])
          expect(String(compose.services[svc]!.environment!.FACTORY_ADDRESS), `${svc} FACTORY_ADDRESS`).toBe(
            stack.factory.toLowerCase(),
          );
        const demo = await playDemoScenario(stack);
        // compose's chain mines a block every 2 s.
        await devChain(anvil.rpcUrl).rpc.call('evm_setIntervalMining', [2]);

        const names: Record<string, string> = {
          'kafka:9092': kafkaBrokers().join(','),
          'http://chain:8545': anvil.rpcUrl,
          'vault-records': topics[0]!,
          'vault-yield-projector': `${prefix}-projector`,
        };
        /** A compose service's environment on this machine. */
        const envOf = (svc: string, extra: Record<string, string> = {}) =>
          Object.fromEntries(
            Object.entries({ ...compose.services[svc]!.environment, ...extra }).map(([k, v]) => [
              k,
              String(v)
                .replace(/^postgres:\/\/(\w+):\$\{[^}]*\}@postgres:5432\/vault_yield$/, (_, role: string) =>
                  role === 'vault_yield_migrator'
                    ? db.migratorUrl
                    : role === 'vault_yield_writer'
                      ? db.writerUrl
                      : db.readerUrl,
                )
                .replace(/^.*$/, (x) => names[x] ?? x),
            ]),
          );
        for (const svc of ['migrate', 'views', 'indexer', 'projector', 'reader'])
          for (const [k, v] of Object.entries(envOf(svc)))
            expect(v, `${svc} ${k}: a compose host or password left unmapped`).not.toMatch(
              /@postgres:|\$\{|kafka:9092|chain:8545/,
            );
        const market = { SCREEN_TOPIC: topics[1]!, CATALOGUE_TOPIC: topics[2]! };

        // The market side compose's projector folds: a screen and a catalogue on its topics.
        const logAdmin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'image-operator-path' });
        try {
          for (const t of topics.slice(1)) await logAdmin.ensureTopic({ topic: t, partitions: 1 });
        } finally {
          await logAdmin.close();
        }
        const now = Date.now();
        for (const [topic, value] of [
          [topics[2]!, demoCatalogue(now)],
          [topics[1]!, demoScreen({ chainId: stack.chainId, tokens: stack.tokens }, now)],
        ] as const) {
          const publisher = await createPublisher({ brokers: kafkaBrokers(), clientId: 'image-test', topic });
          await publisher.publishRaw([{ key: topic, value: Buffer.from(JSON.stringify(value)) }]);
          await publisher.close();
        }

        // compose's one-shot services first, then the long-running ones (their depends_on order).
        for (const svc of ['migrate', 'views']) {
          const r = runNode(compose.services[svc]!.command!, envOf(svc), 120_000);
          expect(r.status, `${svc}: ${r.stderr}`).toBe(0);
        }
        const port = await freePort();
        const tails = () =>
          [...exits, ...[...logs].map(([k, v]) => `--- ${k}:\n${v.slice(-3000)}`)].join('\n');
        /** compose's `restart: unless-stopped`: a service that exits is started again, and the exit noted. */
        const start = async (svc: string, extra: Record<string, string>) => {
          const env = envOf(svc, { ...extra, METRICS_PORT: String(await freePort()) });
          if (svc === 'reader') delete env.METRICS_PORT;
          logs.set(svc, '');
          const keep = (d: Buffer) => logs.set(svc, `${logs.get(svc)}${d}`.slice(-20_000));
          const spawnIt = () => {
            const child = spawn(process.execPath, compose.services[svc]!.command!, {
              cwd: app,
              env: { PATH: process.env.PATH ?? '', HOME: app, ...runtimeMeta.env, ...env },
              stdio: ['ignore', 'pipe', 'pipe'],
            });
            child.stdout!.on('data', keep);
            child.stderr!.on('data', keep);
            child.once('exit', (code, signal) => {
              if (stopping) return;
              exits.push(`${svc} exited (${code ?? signal}) ${walking ? 'during the path' : 'at start'}`);
              if (compose.services[svc]!.restart === 'unless-stopped')
                setTimeout(() => !stopping && spawnIt(), 1000);
            });
            running.set(svc, child);
          };
          spawnIt();
        };
        await start('indexer', {});
        await start('projector', market);
        // Every client of this test reads from one address: the per-client limits are off.
        await start('reader', {
          HOST: '127.0.0.1',
          PORT: String(port),
          RATE_LIMIT_RPS: '0',
          CLIENT_CONCURRENCY: '0',
        });
        const url = `http://127.0.0.1:${port}`;
        for (let t = 0; ; t++) {
          const ready = await fetch(`${url}/ready`).then(
            (r) => r.status,
            () => 0,
          );
          if (ready === 200) break;
          if (t > 300) throw new Error(`the reader never got ready:\n${tails()}`);
          await new Promise((r) => setTimeout(r, 200));
        }

        // The operators' environment: the README's variables, with compose's values.
        const path = await readmePath();
        const env: Record<string, string> = {
          MIGRATE_DATABASE_URL: envOf('migrate').DATABASE_URL!,
          DATABASE_URL: envOf('indexer').DATABASE_URL!,
          KAFKA_BROKERS: envOf('indexer').KAFKA_BROKERS!,
          RPC_URL: envOf('indexer').RPC_URL!,
          FACTORY_ADDRESS: envOf('indexer').FACTORY_ADDRESS!,
        };
        expect(Object.keys(env).sort()).toEqual([...path.exported].sort());
        /** `vault-yield …` of the image (`docker compose run … services/cli/src/main.js …`). */
        const cli = (args: string[], cwd: string) =>
          new Promise<CliResult>((resolve, reject) => {
            const child = spawn(process.execPath, [join(app, 'services/cli/bin/vault-yield.js'), ...args], {
              cwd,
              env: {
                PATH: process.env.PATH ?? '',
                HOME: app,
                ...runtimeMeta.env,
                ...env,
                LOG_FORMAT: 'json',
                LOG_LEVEL: 'warn',
              },
              stdio: ['ignore', 'pipe', 'pipe'],
            });
            let stdout = '';
            let stderr = '';
            child.stdout.on('data', (d) => (stdout += d));
            child.stderr.on('data', (d) => (stderr += d));
            const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
            child.on('error', reject);
            child.on('exit', (code) => {
              clearTimeout(timer);
              resolve({ code, stdout, stderr });
            });
          });
        const vault = demo.vaults[0]!;
        const word = (hex: string) => hex.replace(/^0x/, '').padStart(64, '0');
        // Vault.deposit(WETH, 1e18) from its owner (an unlocked anvil account; the demo approved it).
        const deposit = JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'eth_sendTransaction',
          params: [
            {
              from: vault.owner,
              to: vault.address,
              data: `0x47e7ef24${word(stack.tokens.weth.address)}${word((10n ** 18n).toString(16))}`,
            },
          ],
        });
        walking = true;
        await walkOperatorPath(
          {
            url,
            migrateDatabaseUrl: env.MIGRATE_DATABASE_URL!,
            cli,
            name: (a) => a.replace(/^dev-/, `${prefix}-`),
            deposit: () => sendRpc(anvil.rpcUrl, deposit),
            depositVault: vault.address,
            onTopic: (t) => topics.push(t),
          },
          path,
        ).catch((err: Error) => {
          err.message = `${err.message}\nthe services' last lines:\n${tails()}`;
          throw err;
        });
        // Nothing of the services went down on the way.
        walking = false;
        // Nothing of the services went down on the way (at start, compose restarts the projector
        // until the indexer has created the topic: depends_on does not order them).
        expect(
          exits.filter((e) => e.endsWith('during the path')),
          tails(),
        ).toEqual([]);
      } finally {
        stopping = true;
        await Promise.all(
          [...running.values()].map(
            (c) =>
              new Promise<void>((resolve) => {
                if (c.exitCode !== null || c.signalCode !== null) return resolve();
                const kill = setTimeout(() => c.kill('SIGKILL'), 15_000);
                c.once('exit', () => {
                  clearTimeout(kill);
                  resolve();
                });
                c.kill('SIGTERM');
              }),
          ),
        );
        await anvil.stop();
        const logAdmin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'image-operator-path' });
        for (const t of topics) await logAdmin.deleteTopic(t).catch(() => {});
        await logAdmin.close();
        await dropDatabase(admin, database).catch(() => {});
      }
    }, 600_000);

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
