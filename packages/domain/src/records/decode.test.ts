import { validRecord } from '@vault-yield/test-kit/domain';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeRecord } from './codec.js';
import {
  encodeRecord,
  fastParsePayload,
  fastParseRecord,
  type VaultRecord,
  vaultRecord,
} from './envelope.js';
import { payloadSchemas, recordTypes } from './payloads.js';

/**
 * The fast decode path must accept exactly the inputs `vaultRecord` accepts and return the same
 * output (value and key order). Valid records of every type (hex in mixed case, values at the
 * schema's bounds) and single mutations of them (a key removed, a value replaced by an odd one, an
 * extra key, a string nudged) are compared with `vaultRecord.safeParse`.
 */

/** Values that sit on or just past the schema's edges, or are the wrong kind altogether. */
const odd: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    null,
    true,
    false,
    0,
    -0,
    1,
    -1,
    -2,
    1.5,
    36,
    37,
    887272,
    887273,
    -887273,
    Number.MAX_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER + 1,
    2 ** 60,
    1e21,
    '',
    '0',
    '00',
    '01',
    '-0',
    '-1',
    '1.',
    '.5',
    '1.5',
    `1.${'0'.repeat(36)}`,
    `1.${'0'.repeat(37)}`,
    '0x',
    `0x${'A'.repeat(40)}`,
    `0x${'a'.repeat(39)}`,
    `0x${'a'.repeat(41)}`,
    `0X${'a'.repeat(40)}`,
    `0x${'g'.repeat(40)}`,
    `0x${'F'.repeat(64)}`,
    `0x${'f'.repeat(63)}`,
    `0x${'f'.repeat(64)}\n`,
    'x'.repeat(32),
    'x'.repeat(33),
    'x'.repeat(64),
    'x'.repeat(65),
    'x'.repeat(500),
    'x'.repeat(501),
    [],
    {},
    ...recordTypes,
  ),
  fc.integer(),
  fc.double(),
  fc.string(),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }),
);

type Path = (string | number)[];
function paths(v: unknown, at: Path = []): Path[] {
  const out: Path[] = [at];
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) out.push(...paths(v[i], [...at, i]));
  } else if (v && typeof v === 'object')
    for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...at, k]));
  return out;
}

type Mutation =
  | { kind: 'replace'; value: unknown }
  | { kind: 'delete' }
  | { kind: 'extra'; key: string; value: unknown }
  | { kind: 'nudge'; how: number };

/** A deep copy of `root` with one change at `path`. */
function mutate(root: unknown, path: Path, m: Mutation): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  if (path.length === 0) return m.kind === 'replace' ? m.value : copy;
  let parent: Record<string | number, unknown> = copy;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  const cur = parent[last];
  switch (m.kind) {
    case 'replace':
      parent[last] = m.value;
      break;
    case 'delete':
      if (Array.isArray(parent)) parent.splice(last as number, 1);
      else delete parent[last];
      break;
    case 'extra':
      if (cur && typeof cur === 'object' && !Array.isArray(cur))
        (cur as Record<string, unknown>)[m.key] = m.value;
      else if (Array.isArray(cur)) cur.push(m.value);
      break;
    case 'nudge':
      if (typeof cur === 'string') {
        const variants = [`${cur}0`, cur.slice(0, -1), cur.toUpperCase(), ` ${cur}`, `${cur}.`, `-${cur}`];
        parent[last] = variants[m.how % variants.length];
      } else if (typeof cur === 'number') {
        const variants = [cur + 1, cur - 1, -cur, cur + 0.5, cur * 2 ** 30];
        parent[last] = variants[m.how % variants.length];
      }
      break;
  }
  return copy;
}

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), value: odd }),
  fc.constant({ kind: 'delete' as const }),
  fc.record({
    kind: fc.constant('extra' as const),
    key: fc.oneof(fc.string(), fc.constantFrom('type', 'payload', 'extra', '__proto__', 'toString')),
    value: odd,
  }),
  fc.record({ kind: fc.constant('nudge' as const), how: fc.nat() }),
);

/** The fast path's verdict and output equal zod's, key order included. */
function agree(input: unknown): void {
  const zod = vaultRecord.safeParse(input);
  const fast = fastParseRecord(input);
  expect(fast !== undefined, JSON.stringify(input)).toBe(zod.success);
  if (zod.success) {
    expect(fast).toEqual(zod.data);
    expect(JSON.stringify(fast)).toBe(JSON.stringify(zod.data));
  }
}

describe('fastParseRecord', () => {
  it('accepts every valid record, with the output of vaultRecord', () => {
    fc.assert(
      fc.property(validRecord, (r) => {
        expect(vaultRecord.safeParse(r).success).toBe(true);
        agree(r);
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees with vaultRecord on mutated records', () => {
    fc.assert(
      fc.property(
        validRecord.chain((r) => fc.tuple(fc.constant(r), fc.constantFrom(...paths(r)), mutation)),
        ([r, path, m]) => agree(mutate(r, path, m)),
      ),
      { numRuns: 10_000 },
    );
  });

  it('agrees with vaultRecord on records reparsed from JSON (the decode path)', () => {
    fc.assert(
      fc.property(
        validRecord.chain((r) => fc.tuple(fc.constant(r), fc.constantFrom(...paths(r)), mutation)),
        ([r, path, m]) => agree(JSON.parse(JSON.stringify(mutate(r, path, m)) ?? 'null')),
      ),
      { numRuns: 5000 },
    );
  });

  it('agrees on values that are not records at all', () => {
    fc.assert(fc.property(odd, (v) => agree(v)));
    fc.assert(fc.property(fc.jsonValue(), (v) => agree(v)));
  });
});

describe('fastParsePayload', () => {
  /** Its verdict and output equal the type's payload schema's, key order included. */
  function agreePayload(type: VaultRecord['type'], input: unknown): void {
    const zod = payloadSchemas[type].safeParse(input);
    const fast = fastParsePayload(type, input);
    expect(fast !== undefined, JSON.stringify(input)).toBe(zod.success);
    if (zod.success) expect(JSON.stringify(fast)).toBe(JSON.stringify(zod.data));
  }

  it('agrees with payloadSchemas on valid and mutated payloads of every type', () => {
    fc.assert(
      fc.property(
        validRecord.chain((r) =>
          fc.tuple(fc.constant(r), fc.constantFrom(...paths(r.payload)), mutation, fc.boolean()),
        ),
        ([r, path, m, keep]) => agreePayload(r.type, keep ? r.payload : mutate(r.payload, path, m)),
      ),
      { numRuns: 5000 },
    );
  });
});

describe('decodeRecord', () => {
  it('returns zod’s reason for a rejected record and the parsed record otherwise', () => {
    fc.assert(
      fc.property(
        validRecord.chain((r) => fc.tuple(fc.constant(r), fc.constantFrom(...paths(r)), mutation)),
        ([r, path, m]) => {
          const input = mutate(r, path, m);
          const bytes = Buffer.from(JSON.stringify(input) ?? 'null');
          const json = JSON.parse(bytes.toString('utf8'));
          const zod = vaultRecord.safeParse(json);
          const decoded = decodeRecord(bytes);
          if (zod.success) expect(decoded).toEqual({ ok: true, record: zod.data });
          else {
            const issue = zod.error.issues[0];
            expect(decoded).toEqual({
              ok: false,
              reason: `schema: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
            });
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('encodeRecord writes exactly JSON.stringify(record), with contexts shared between records or not', () => {
    fc.assert(
      fc.property(fc.array(validRecord, { minLength: 1, maxLength: 8 }), fc.boolean(), (rs, share) => {
        const parsed = rs.map((r) => vaultRecord.parse(r));
        // Producers hand many records the same context object: encoded once, reused after.
        const first = parsed[0]!.context;
        const records = share ? parsed.map((r) => ({ ...r, context: first })) : parsed;
        for (const r of records) expect(encodeRecord(r).toString('utf8')).toBe(JSON.stringify(r));
        for (const r of records) expect(encodeRecord(r).toString('utf8')).toBe(JSON.stringify(r));
      }),
      { numRuns: 300 },
    );
    // A string value holding the marker text (a suspension reason is anyone's text) changes nothing.
    const r = vaultRecord.parse(fc.sample(validRecord, { numRuns: 1, seed: 7 })[0]);
    for (const reason of ['"context":"\u0000context\u0000"', '\u0000context\u0000', '"context":']) {
      const odd = { ...r, type: 'suspended', payload: { reason } } as VaultRecord;
      expect(encodeRecord(odd).toString('utf8')).toBe(JSON.stringify(odd));
    }
  });

  it('round-trips encodeRecord and refuses bytes that are not JSON', () => {
    fc.assert(
      fc.property(validRecord, (r) => {
        const parsed = vaultRecord.parse(r);
        expect(decodeRecord(encodeRecord(parsed))).toEqual({ ok: true, record: parsed });
        expect(decodeRecord(new Uint8Array(encodeRecord(parsed)))).toEqual({ ok: true, record: parsed });
      }),
      { numRuns: 300 },
    );
    expect(decodeRecord(null)).toEqual({ ok: false, reason: 'empty record value' });
    expect(decodeRecord(Buffer.from('{nope')).ok).toBe(false);
  });
});
