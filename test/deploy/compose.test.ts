import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseDockerfile, repoRoot, stage } from './dockerfile.js';

/**
 * docker-compose.yml read as YAML (anchors and merges resolved): each volume sits where its image
 * writes, secrets come from .env, every long-running service has a healthcheck, and the reader
 * reads the schema `rebuild` switches.
 */
interface Service {
  image?: string;
  build?: { target?: string };
  entrypoint?: string[];
  command?: string[];
  environment?: Record<string, string | number>;
  volumes?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  restart?: string;
}
const text = readFileSync(join(repoRoot, 'docker-compose.yml'), 'utf8');
const compose = parse(text, { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
};
const svc = (name: string): Service => {
  const s = compose.services[name];
  if (!s) throw new Error(`no service ${name} in docker-compose.yml`);
  return s;
};
const env = (name: string, key: string): string | undefined => {
  const v = svc(name).environment?.[key];
  return v === undefined ? undefined : String(v);
};

/** Where each image writes its data unless told otherwise (the images' own defaults). */
const IMAGE_DATA: Record<string, { variable: string; fallback: string }> = {
  'apache/kafka': { variable: 'KAFKA_LOG_DIRS', fallback: '/tmp/kraft-combined-logs' },
  postgres: { variable: 'PGDATA', fallback: '/var/lib/postgresql/data' },
};

/** True when `path` lies on one of the service's named volumes (not a bind mount). */
function onNamedVolume(s: Service, path: string): boolean {
  return (s.volumes ?? []).some((v) => {
    const [source = '', target = ''] = v.split(':');
    const named = !source.startsWith('.') && !source.startsWith('/') && source in compose.volumes;
    return named && (path === target || path.startsWith(`${target.replace(/\/$/, '')}/`));
  });
}

describe('docker-compose.yml keeps what it promises', () => {
  it('pins every image it pulls by digest (the images built here are the only tags)', () => {
    const pulled = Object.entries(compose.services).filter(
      ([, s]) => s.image && !s.image.startsWith('vault-yield'),
    );
    expect(pulled.length).toBeGreaterThan(0);
    for (const [name, s] of pulled)
      expect(s.image, name).toMatch(/^[a-z0-9./-]+:[\w.-]+@sha256:[0-9a-f]{64}$/);
  });

  it("puts Kafka's log dirs and Postgres' PGDATA on their volumes", () => {
    let checked = 0;
    for (const [name, s] of Object.entries(compose.services)) {
      const image = s.image?.split(':')[0] ?? '';
      const data = IMAGE_DATA[image];
      if (!data) continue;
      const dir = env(name, data.variable) ?? data.fallback;
      for (const d of dir.split(','))
        expect(onNamedVolume(s, d), `${name}: ${data.variable}=${d} not on a volume`).toBe(true);
      checked++;
    }
    expect(checked).toBe(2);
  });

  it('gives Kafka a fixed CLUSTER_ID (the formatted log dir names it)', () => {
    expect(env('kafka', 'CLUSTER_ID')).toMatch(/^\S{16,}$/);
  });

  it("keeps anvil's state file on a volume the chain image's user may write", () => {
    const chain = svc('chain');
    const args = [...(chain.entrypoint ?? []), ...(chain.command ?? [])];
    const state = args[args.indexOf('--state') + 1];
    expect(args).toContain('--state');
    expect(state && onNamedVolume(chain, state), `--state ${state}`).toBe(true);
    // A fresh named volume takes the image directory's owner: the chain target creates it for `node`.
    const target = stage(parseDockerfile(), chain.build!.target!);
    const runs = target.instructions.filter((i) => i.op === 'RUN').map((i) => i.raw);
    const user = target.instructions.findLast((i) => i.op === 'USER')?.args[0];
    expect(
      runs.some((r) => r.includes(`mkdir -p ${posix.dirname(state!)}`) && r.includes(`chown ${user}`)),
    ).toBe(true);
  });

  it('plays the demo only on a chain that does not have it (its checkpoint names the live chain)', () => {
    const demo = svc('demo');
    expect(demo.entrypoint?.join(' ')).toContain('infra/docker/demo-once.ts');
    expect(env('demo', 'FACTORY_ADDRESS')).toBe(env('indexer', 'FACTORY_ADDRESS'));
    expect(readFileSync(join(repoRoot, 'infra/docker/demo-once.ts'), 'utf8')).toContain('eth_getCode');
  });

  it('runs the reader on the views schema that `rebuild` switches, bootstrapped before it starts', () => {
    const views = env('views', 'VIEWS_SCHEMA');
    expect(views).toBeTruthy();
    expect(env('reader', 'PROJECTION_SCHEMA')).toBe(views);
    expect(env('reader', 'PROJECTION_SCHEMA')).not.toBe(env('projector', 'PROJECTION_SCHEMA'));
    expect(env('views', 'PROJECTION_SCHEMA')).toBe(env('projector', 'PROJECTION_SCHEMA'));
    expect(svc('reader').depends_on?.views?.condition).toBe('service_completed_successfully');
  });

  it('has a healthcheck on every long-running service, on the port it serves', () => {
    const oneShot = new Set(
      Object.values(compose.services).flatMap((s) =>
        Object.entries(s.depends_on ?? {})
          .filter(([, d]) => d.condition === 'service_completed_successfully')
          .map(([n]) => n),
      ),
    );
    for (const [name, s] of Object.entries(compose.services)) {
      if (oneShot.has(name)) continue;
      expect(s.healthcheck?.test, name).toBeTruthy();
      const port = env(name, 'METRICS_PORT') ?? (name === 'reader' ? env(name, 'PORT') : undefined);
      if (port) expect(s.healthcheck!.test.join(' '), name).toContain(`127.0.0.1:${port}/`);
    }
    expect(svc('reader').healthcheck!.test.join(' ')).toContain('/ready');
    expect(svc('indexer').healthcheck!.test.join(' ')).toContain('/health');
  });

  it('takes every password from .env, never inline, and the example names each one', () => {
    const example = readFileSync(join(repoRoot, 'infra/docker/.env.example'), 'utf8');
    const vars = new Set<string>();
    for (const [name, s] of Object.entries(compose.services)) {
      for (const [key, raw] of Object.entries(s.environment ?? {})) {
        const value = String(raw);
        const url = /^postgres(?:ql)?:\/\/[^:@/]+:([^@]*)@/.exec(value);
        const secret = url?.[1] ?? (/PASSWORD$/.test(key) ? value : undefined);
        if (secret === undefined) continue;
        const ref = /^\$\{(\w+):\?[^}]+\}$/.exec(secret);
        expect(ref, `${name}.${key}: a password inline`).not.toBeNull();
        vars.add(ref![1]!);
      }
    }
    expect([...vars].sort()).toEqual([
      'POSTGRES_PASSWORD',
      'VAULT_YIELD_MIGRATOR_PASSWORD',
      'VAULT_YIELD_READER_PASSWORD',
      'VAULT_YIELD_WEBHOOKS_PASSWORD',
      'VAULT_YIELD_WRITER_PASSWORD',
    ]);
    for (const v of vars) expect(example).toMatch(new RegExp(`^${v}=`, 'm'));
    // The real .env stays out of the build context.
    const ignore = readFileSync(join(repoRoot, '.dockerignore'), 'utf8');
    expect(ignore).toMatch(/^\.env$/m);
  });

  it('starts each long-running service by its own entry, not through the CLI', () => {
    for (const name of ['indexer', 'projector', 'reader', 'webhooks'])
      expect(svc(name).command, name).toEqual([`services/${name}/src/main.js`]);
  });

  it('runs the services from the runtime target and only chain/demo from the chain target', () => {
    for (const [name, s] of Object.entries(compose.services)) {
      if (!s.build) continue;
      expect(s.build.target, name).toBe(['chain', 'demo'].includes(name) ? 'chain' : 'runtime');
    }
  });
});
