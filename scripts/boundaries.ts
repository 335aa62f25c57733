/**
 * The import boundaries of biome.json (noRestrictedImports), written once here and generated into
 * biome.json: Biome has no variables, and an override's options replace the top level's, so the
 * patterns every file obeys are repeated in each layer's override. The layers: packages import only
 * packages; a service imports packages, not another service; the CLI composes services and the dev
 * stack, never test support; the dev stack builds on packages and services. A new folder under
 * services/ is a service here as soon as it exists.
 *
 *   node --import tsx scripts/boundaries.ts           prints biome.json as it should be
 *   node --import tsx scripts/boundaries.ts --write   rewrites biome.json
 *   node --import tsx scripts/boundaries.ts --check   exits 1 when biome.json differs
 *
 * test/lint/boundaries.test.ts runs the check, and plants violations against the result.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const BIOME = fileURLToPath(new URL('../biome.json', import.meta.url));
const SERVICES_DIR = fileURLToPath(new URL('../services', import.meta.url));

interface Pattern {
  group: string[];
  message: string;
}

/** What every file obeys: workspaces are imported by name and by their entries, never by path. */
const EVERYWHERE: readonly Pattern[] = [
  ['../../**/src/**', "reaches into another package's sources by path: import it by name (@vault-yield/...)"],
  ['**/packages/**', 'reaches into packages/ by path: import the package by name (@vault-yield/...)'],
  ['**/services/**', 'reaches into services/ by path: import the service by name (@vault-yield/...)'],
  ['**/infra/**', 'reaches into infra/ by path: import the dev stack by name (@vault-yield/devstack/...)'],
  ['**/test/**', 'reaches into test/ by path: import the test kit by name (@vault-yield/test-kit/...)'],
  ['**/kit/**', 'reaches into the test kit by path: import it by name (@vault-yield/test-kit/...)'],
  ['@vault-yield/*/src/**', "imports a package's internals: use its entry or a subpath it exports"],
  ['@vault-yield/*/dist/**', "imports a package's build output: use its entry or a subpath it exports"],
].map(([group, message]) => ({ group: [group!], message: message! }));

/** The long-running services (services/* but the CLI), by folder name. */
const services = () =>
  readdirSync(SERVICES_DIR, { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== 'cli')
    .map((d) => d.name)
    .sort();

/** Each layer: the files it covers, why, and the workspaces below it may not import. */
function layers(): { includes: string; why: string; refused: string[] }[] {
  const all = services();
  const upper = [...all, 'cli', 'devstack', 'test-kit'];
  return [
    { includes: 'packages/**', why: 'a package imports only packages', refused: upper },
    ...all.map((s) => ({
      includes: `services/${s}/**`,
      why: 'a service imports packages, not another service',
      refused: upper.filter((n) => n !== s),
    })),
    {
      includes: 'services/cli/**',
      why: 'the CLI composes services and the dev stack, never test support',
      refused: ['test-kit'],
    },
    {
      includes: 'infra/**',
      why: 'the dev stack builds on packages and services',
      refused: ['cli', 'test-kit'],
    },
  ];
}

const rule = (patterns: readonly Pattern[]) => ({
  noRestrictedImports: { level: 'error', options: { patterns } },
});

/** biome.json with its boundaries as generated (everything else as it is). */
export function generate(current: string): string {
  const config = JSON.parse(current) as {
    linter: { rules: { style: Record<string, unknown> } };
    overrides?: unknown[];
  };
  config.linter.rules.style = { ...config.linter.rules.style, ...rule(EVERYWHERE) };
  config.overrides = layers().map((l) => ({
    includes: [l.includes, '!**/*.test.ts'],
    linter: {
      rules: {
        style: rule([
          ...EVERYWHERE,
          ...l.refused.map((n) => ({
            group: [`@vault-yield/${n}`, `@vault-yield/${n}/**`],
            message: `${l.why}: @vault-yield/${n} is not below it`,
          })),
        ]),
      },
    },
  }));
  return `${JSON.stringify(config, null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const current = readFileSync(BIOME, 'utf8');
  const wanted = generate(current);
  if (process.argv.includes('--write')) writeFileSync(BIOME, wanted);
  else if (process.argv.includes('--check')) {
    if (JSON.stringify(JSON.parse(current)) !== JSON.stringify(JSON.parse(wanted))) {
      console.error('biome.json differs from scripts/boundaries.ts: run npm run lint:boundaries');
      process.exit(1);
    }
  } else process.stdout.write(wanted);
}
