import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One instruction of a Dockerfile: `COPY a b` → { op: 'COPY', flags: {}, args: ['a', 'b'] }. */
export interface Instruction {
  op: string;
  flags: Record<string, string>;
  args: string[];
  /** The instruction's text after the op (RUN's shell command, CMD's JSON). */
  raw: string;
}

export interface Stage {
  name: string;
  /** An image, or the name of an earlier stage. */
  from: string;
  instructions: Instruction[];
}

export const repoRoot = join(import.meta.dirname, '..', '..');
export const DOCKERFILE = join(repoRoot, 'infra/docker/Dockerfile');

/** Parses the Dockerfile: line continuations, comments, global ARG defaults, stages. */
export function parseDockerfile(text: string = readFileSync(DOCKERFILE, 'utf8')): Stage[] {
  const logical = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  const subst = (s: string) =>
    s.replace(/\$\{(\w+)\}|\$(\w+)/g, (m, a?: string, b?: string) => args.get(a ?? b ?? '') ?? m);
  for (const line of logical) {
    const [, op = '', rest = ''] = /^(\w+)\s*(.*)$/.exec(line) ?? [];
    const upper = op.toUpperCase();
    if (upper === 'ARG' && stages.length === 0) {
      const [name, value = ''] = rest.split('=');
      args.set(name!.trim(), value.trim());
      continue;
    }
    if (upper === 'FROM') {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(subst(rest));
      if (!m) throw new Error(`unparsed FROM: ${line}`);
      stages.push({ name: m[2] ?? String(stages.length), from: m[1]!, instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`instruction before FROM: ${line}`);
    const flags: Record<string, string> = {};
    let body = rest;
    for (;;) {
      const f = /^--(\w[\w-]*)=(\S+)\s+/.exec(body);
      if (!f) break;
      flags[f[1]!] = f[2]!;
      body = body.slice(f[0].length);
    }
    const argv = body.startsWith('[') ? (JSON.parse(body) as string[]) : body.split(/\s+/);
    stage.instructions.push({ op: upper, flags, args: argv, raw: body });
  }
  return stages;
}

export function stage(stages: Stage[], name: string): Stage {
  const s = stages.find((x) => x.name === name);
  if (!s) throw new Error(`no stage ${name} in infra/docker/Dockerfile`);
  return s;
}

/** The stages a target is built from, base first (FROM chains and COPY --from). */
export function stagesOf(stages: Stage[], target: string): Stage[] {
  const out: Stage[] = [];
  const visit = (name: string) => {
    const s = stage(stages, name);
    if (out.includes(s)) return;
    if (stages.some((x) => x.name === s.from)) visit(s.from);
    for (const i of s.instructions) if (i.op === 'COPY' && i.flags.from) visit(i.flags.from);
    out.push(s);
  };
  visit(target);
  return out;
}

/** A .dockerignore pattern as a regular expression (globstar, `*`, `?`); it covers what is under it. */
export function ignorePattern(pattern: string): RegExp {
  let re = '';
  const p = pattern.replace(/^\/+|\/+$/g, '');
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (p.startsWith('**/', i)) {
      re += '(?:.*/)?';
      i += 2;
    } else if (p.startsWith('**', i)) {
      re += '.*';
      i += 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += '.+^$(){}|[]\\'.includes(c) ? `\\${c}` : c;
  }
  return new RegExp(`^${re}(?:/.*)?$`);
}

/** .dockerignore as a predicate on repository-relative paths; the last matching rule wins (`!` keeps). */
export function dockerignore(text: string): (path: string) => boolean {
  const rules = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => ({ negate: l.startsWith('!'), re: ignorePattern(l.replace(/^!/, '')) }));
  return (path) => {
    let ignored = false;
    for (const r of rules) if (r.re.test(path)) ignored = !r.negate;
    return ignored;
  };
}
