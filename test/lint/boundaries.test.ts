/**
 * The package boundaries (#29): lint refuses a deep import across packages, an import by path
 * into another workspace, and an import against the layers (packages ← services ← cli; test
 * support only in tests), and every workspace's manifest lists the @vault-yield packages it
 * imports. Violations are planted in a scratch copy of the repository's own biome.json, at the
 * paths they would have in the tree, and linted with the repository's Biome.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIOME, generate } from '../../scripts/boundaries.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const biome = join(repo, 'node_modules', '.bin', 'biome');
let scratch: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'boundaries-'));
  const config = JSON.parse(readFileSync(join(repo, 'biome.json'), 'utf8')) as Record<string, unknown>;
  delete config['$schema'];
  writeFileSync(join(scratch, 'biome.json'), JSON.stringify(config));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Lints one planted file; the messages of its noRestrictedImports diagnostics. */
function lint(path: string, source: string): string[] {
  const file = join(scratch, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, source);
  const run = spawnSync(biome, ['lint', '--reporter=json', '--max-diagnostics=50', path], {
    cwd: scratch,
    encoding: 'utf8',
  });
  rmSync(file);
  const report = JSON.parse(run.stdout) as {
    diagnostics: { category: string; message: string }[];
  };
  return report.diagnostics
    .filter((d) => d.category === 'lint/style/noRestrictedImports')
    .map((d) => d.message);
}

const use = (spec: string) => `import { x } from '${spec}';\nexport const y = x;\n`;

describe('the boundaries are written once', () => {
  it('biome.json holds what scripts/boundaries.ts generates (every service under services/ covered)', () => {
    const current = readFileSync(BIOME, 'utf8');
    // On failure: npm run lint:boundaries
    expect(JSON.parse(current)).toEqual(JSON.parse(generate(current)));
    const covered = (JSON.parse(current) as { overrides: { includes: string[] }[] }).overrides.map(
      (o) => o.includes[0],
    );
    for (const d of readdirSync(join(repo, 'services'), { withFileTypes: true }))
      if (d.isDirectory()) expect(covered).toContain(`services/${d.name}/**`);
  });
});

describe('lint refuses imports across the boundaries', () => {
  it.each([
    ['services/cli/src/commands/x.ts', '../../../projector/src/retry.js', "another package's sources"],
    ['services/cli/src/dev/x.ts', '../../../../infra/kafka/index.js', 'infra/ by path'],
    ['packages/store/src/admin/x.test.ts', '../../../../test/harness/index.js', 'test/ by path'],
    ['test/strategy/x.test.ts', '../../services/projector/src/strategy/index.js', 'services/ by path'],
    ['test/strategy/x.test.ts', '../../packages/log/src/publisher/index.js', 'packages/ by path'],
    ['test/strategy/x.test.ts', '../kit/src/index.js', 'test kit by path'],
    ['bench/x.ts', '../infra/chain/index.js', 'infra/ by path'],
    ['test/strategy/x.test.ts', '@vault-yield/projector/src/retry.js', "a package's internals"],
    ['packages/store/src/x.ts', '@vault-yield/projector', 'a package imports only packages'],
    ['packages/domain/src/fold/x.ts', '@vault-yield/test-kit/domain', 'a package imports only packages'],
    ['services/reader/src/x.ts', '@vault-yield/projector', 'not another service'],
    ['services/projector/src/strategy/x.ts', '@vault-yield/indexer/config', 'not another service'],
    ['services/indexer/src/x.ts', '@vault-yield/devstack/chain', 'not another service'],
    ['services/cli/src/commands/x.ts', '@vault-yield/test-kit', 'never test support'],
    ['infra/chain/x.ts', '@vault-yield/cli/config', 'the dev stack builds on packages'],
  ])('%s importing %s', (path, spec, why) => {
    const messages = lint(path, use(spec));
    expect(messages.length, `${path} → ${spec} passed lint`).toBeGreaterThan(0);
    expect(messages.join('\n')).toContain(why);
  });

  it.each([
    ['services/cli/src/commands/x.ts', '@vault-yield/projector'],
    ['services/cli/src/commands/x.ts', '@vault-yield/indexer/config'],
    ['services/cli/src/dev/x.ts', '@vault-yield/devstack/kafka'],
    ['services/reader/src/routes/x.ts', '../middleware/client-address.js'],
    ['services/reader/src/dashboard/app/x.ts', '../../../openapi/document.js'],
    ['packages/store/src/admin/x.test.ts', '@vault-yield/test-kit'],
    ['packages/chain/src/x.int.test.ts', '@vault-yield/devstack/chain'],
    ['packages/contracts/scripts/x.ts', '../src/index.js'],
    ['test/strategy/x.test.ts', '@vault-yield/test-kit/screen'],
    ['test/strategy/x.test.ts', '../projector/support.js'],
    ['test/config/x.test.ts', '../../scripts/config-table.js'],
  ])('allows %s importing %s', (path, spec) => {
    expect(lint(path, use(spec))).toEqual([]);
  });
});

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function workspaces(): string[] {
  const root = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { workspaces: string[] };
  return root.workspaces.flatMap((w) =>
    w.endsWith('/*')
      ? readdirSync(join(repo, w.slice(0, -2)), { withFileTypes: true })
          .filter((d) => d.isDirectory())
          .map((d) => `${w.slice(0, -2)}/${d.name}`)
      : [w],
  );
}

function sources(dir: string): string[] {
  return readdirSync(join(repo, dir), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && /\.(ts|js)$/.test(d.name) && !d.name.endsWith('.d.ts'))
    .map((d) => relative(repo, join(d.parentPath, d.name)))
    .filter(
      (f) =>
        !f.split(sep).some((s) => s === 'node_modules' || s === 'dist' || s === 'lib' || s === 'artifacts'),
    );
}

describe('every workspace declares the @vault-yield packages it imports', () => {
  it.each(workspaces())('%s', (dir) => {
    const manifest = JSON.parse(readFileSync(join(repo, dir, 'package.json'), 'utf8')) as Manifest;
    const declared = new Set([
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.devDependencies ?? {}),
    ]);
    const runtime = new Set(Object.keys(manifest.dependencies ?? {}));
    const missing: string[] = [];
    for (const file of sources(dir)) {
      const text = readFileSync(join(repo, file), 'utf8');
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*'(@vault-yield\/[a-z-]+)/g)) {
        const name = m[1]!;
        if (name === manifest.name) continue;
        const isTest = /\.test\.ts$/.test(file);
        // a lazily imported dev-only tool (the CLI's `dev` command) may be a devDependency
        if (!(isTest || file.includes(`${sep}dev`) ? declared : runtime).has(name))
          missing.push(`${file} → ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
