/**
 * The image's compile step (infra/docker/Dockerfile, stage `build`), run in the image's /app — a
 * copy of the repository installed with `npm ci` — never in a checkout (it rewrites the tree):
 *
 * 1. every `.ts` of packages/*\/src and services/*\/src (tests left out) becomes `.js` beside it
 *    (esbuild's per-file transform, as tsx runs it today) and the `.ts` is removed, so the
 *    services run with plain `node` and nothing at run time needs tsx or esbuild;
 * 2. the workspace packages' `exports`/`bin` and the two launchers that load `.ts` through tsx
 *    (the CLI's bin, the indexer's publisher thread) are pointed at the `.js`;
 * 3. the dashboard's script is bundled now, by the reader's own `bundleDashboard`, and the reader's
 *    call to esbuild is served that prebuilt bundle (dashboard/prebuilt.js);
 * 4. Scalar's standalone bundle is copied beside the docs page (openapi/scalar-standalone.js), so
 *    the runtime ships without @scalar/api-reference (a devDependency, pruned).
 *
 * Fails loudly when a substitution finds nothing to substitute, so a moved file breaks the build,
 * not the image.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { transform } from 'esbuild';

const root = process.cwd();
if (existsSync(join(root, '.git'))) {
  console.error(
    'infra/docker/build.ts rewrites the tree it runs in: run it in the image (or a copy), not in a checkout',
  );
  process.exit(2);
}

const workspaceDirs = ['packages', 'services'].flatMap((top) =>
  readdirSync(join(root, top)).map((name) => join(root, top, name)),
);

function* tsFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* tsFiles(path);
    else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts') && !entry.endsWith('.test.ts')) yield path;
  }
}

function replaceOnce(file: string, from: string, to: string): void {
  const text = readFileSync(file, 'utf8');
  const count = text.split(from).length - 1;
  if (count !== 1)
    throw new Error(`${relative(root, file)}: expected one ${JSON.stringify(from)}, found ${count}`);
  writeFileSync(file, text.replace(from, to));
}

// 3 (first, while the sources are TypeScript): the dashboard's bundle, made by the reader's code.
const dashboardDir = join(root, 'services/reader/src/dashboard');
const { bundleDashboard } = (await import(join(dashboardDir, 'index.ts'))) as {
  bundleDashboard: () => Promise<string>;
};
writeFileSync(join(dashboardDir, 'app/app.js'), await bundleDashboard());
writeFileSync(
  join(dashboardDir, 'prebuilt.js'),
  `// Written by infra/docker/build.ts: the dashboard's bundle was made at image build time.
import { readFile } from 'node:fs/promises';
export async function build() {
  return { outputFiles: [{ text: await readFile(new URL('./app/app.js', import.meta.url), 'utf8') }] };
}
`,
);

// 1: transpile every source file in place.
let files = 0;
for (const dir of workspaceDirs) {
  const src = join(dir, 'src');
  if (!existsSync(src)) continue;
  for (const file of tsFiles(src)) {
    const out = await transform(readFileSync(file, 'utf8'), {
      loader: 'ts',
      format: 'esm',
      target: 'node20',
      sourcefile: relative(root, file),
      sourcemap: 'inline',
    });
    writeFileSync(file.replace(/\.ts$/, '.js'), out.code);
    rmSync(file);
    files++;
  }
  // Tests and their fixtures are not part of the image.
  for (const test of readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) =>
    f.endsWith('.test.ts'),
  )) {
    rmSync(join(src, test));
  }
}
replaceOnce(join(dashboardDir, 'index.js'), 'from "esbuild"', 'from "./prebuilt.js"');

// 4: Scalar's standalone bundle, copied beside docs.js (the reader serves the copy when there):
// @scalar/api-reference is a devDependency, pruned with its ≈ 276 packages.
{
  const pkg = join(root, 'node_modules/@scalar/api-reference');
  const from = join(pkg, 'dist/browser/standalone.js');
  if (!existsSync(from)) throw new Error(`no Scalar bundle at ${relative(root, from)}`);
  copyFileSync(from, join(root, 'services/reader/src/openapi/scalar-standalone.js'));
}

// Build-time tools outside src/ (e.g. packages/contracts/scripts) are not part of the image.
for (const dir of workspaceDirs) {
  for (const entry of readdirSync(dir)) {
    if (entry === 'src' || entry === 'node_modules' || entry === 'dist') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) for (const file of tsFiles(path)) rmSync(file);
  }
}

// compose's views bootstrap, beside the services (infra/ is not part of the image).
const bootstrap = await transform(readFileSync(join(root, 'infra/docker/views-bootstrap.ts'), 'utf8'), {
  loader: 'ts',
  format: 'esm',
  target: 'node20',
});
mkdirSync(join(root, 'deploy'), { recursive: true });
writeFileSync(join(root, 'deploy/views-bootstrap.js'), bootstrap.code);

// 2: package entry points and the tsx launchers.
for (const dir of workspaceDirs) {
  const file = join(dir, 'package.json');
  const text = readFileSync(file, 'utf8');
  const next = text.replace(/"(\.\/src\/[^"]+)\.ts"/g, (whole, path: string) =>
    existsSync(join(dir, `${path}.js`)) ? `"${path}.js"` : whole,
  );
  if (next !== text) writeFileSync(file, next);
}
writeFileSync(
  join(root, 'services/cli/bin/vault-yield.js'),
  "#!/usr/bin/env node\n// Image build (infra/docker/build.ts): the sources are JavaScript here.\nawait import('../src/main.js');\n",
);
const boot = join(root, 'services/indexer/src/publisher/boot.mjs');
// The launcher as it is today (registers tsx, imports worker.ts): anything else stops the build.
replaceOnce(boot, "import { register } from 'tsx/esm/api';", '');
replaceOnce(boot, "await import('./worker.ts');", '');
writeFileSync(
  boot,
  "// Entry of the publisher thread. Image build (infra/docker/build.ts): the sources are JavaScript.\nawait import('./worker.js');\n",
);

console.log(`compiled ${files} files to JavaScript; dashboard bundled`);
