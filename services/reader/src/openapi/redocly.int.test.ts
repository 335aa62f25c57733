import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReader, readerConfig } from '../index.js';

const run = promisify(execFile);
const require = createRequire(import.meta.url);
/** Redocly CLI's entry point (devDependency @redocly/cli). */
const REDOCLY = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer?: string }[] }[];
}

/** `redocly lint` of `file` with the recommended rules (config written beside it), as JSON. */
async function lint(dir: string, file: string): Promise<LintReport> {
  await writeFile(join(dir, 'redocly.yaml'), 'extends:\n  - recommended\n');
  const env = {
    ...process.env,
    REDOCLY_TELEMETRY: 'off',
    REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
    NO_COLOR: '1',
  };
  const out = await run(process.execPath, [REDOCLY, 'lint', file, '--format=json'], {
    cwd: dir,
    env,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((err: { stdout?: string; stderr?: string }) => {
    // Exit code 1 on errors: the report is on stdout all the same.
    if (err.stdout) return { stdout: err.stdout, stderr: err.stderr ?? '' };
    throw err;
  });
  return JSON.parse(out.stdout) as LintReport;
}

// The document is built from the route declarations: a reader whose database does not exist serves it.
const reader = createReader(
  readerConfig('postgres://nobody@127.0.0.1:1/none', {
    logLevel: 'silent',
    rateLimit: { ratePerSecond: 0, burst: 1, trustedProxies: { kind: 'none' } },
  }),
);

describe('redocly lint (recommended rules) of the served /openapi.json', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'vault-yield-redocly-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('passes with no error and no warning', { timeout: 120_000 }, async () => {
    const res = await reader.app.request('/openapi.json');
    expect(res.status).toBe(200);
    await writeFile(join(dir, 'openapi.json'), await res.text());
    const report = await lint(dir, 'openapi.json');
    const problems = report.problems.map(
      (p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`,
    );
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('the check bites: an example that breaks its schema is a warning', { timeout: 120_000 }, async () => {
    const doc = (await (await reader.app.request('/openapi.json')).json()) as {
      paths: Record<
        string,
        { get: { responses: Record<string, { content: Record<string, { example: unknown }> }> } }
      >;
      info: Record<string, unknown>;
    };
    const media = doc.paths['/v1/vaults']!.get.responses['200']!.content['application/json']!;
    media.example = [{ vault: 'not an address' }];
    delete doc.info.license;
    await writeFile(join(dir, 'broken.json'), JSON.stringify(doc));
    const report = await lint(dir, 'broken.json');
    expect(new Set(report.problems.map((p) => p.ruleId))).toEqual(
      new Set(['info-license', 'no-invalid-media-type-examples']),
    );
  });
});
