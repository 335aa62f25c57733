import { z } from '@hono/zod-openapi';
import { activityTypes, parseVaultId, type VaultId, type VaultRef, vaultIdOf } from '@vault-yield/domain';
import type { LedgerKey, TxLedgerKey, VaultsKey } from '@vault-yield/store';

/**
 * Path and query parameter schemas: declared once, they validate requests (routes/declare.ts) and
 * describe the parameters in /openapi.json. Every value arrives as a string; each schema checks the
 * raw text first (bounded, anchored patterns) and only then converts, so no input reaches SQL
 * unchecked.
 */

export const LIMITS = {
  events: { default: 50, max: 500 },
  vaults: { default: 50, max: 500 },
  tx: { default: 100, max: 500 },
  equity: { defaultPoints: 200, maxPoints: 1000 },
  /** Longest raw query value accepted (a cursor is ~120 chars; a full type list ~220). */
  valueLength: 512,
} as const;

/** 0x + 40 hex, any case in; lowercase out. */
export const addressParam = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'expected an address: 0x followed by 40 hex digits')
  .transform((a) => a.toLowerCase());

/**
 * How a request names a vault: by its id (`eip155:{chainId}:0x…`: one vault), or by a bare
 * address (every chain it is a vault on: one answers, several answer 409, none 404).
 */
export type VaultName = { id: VaultId; ref: VaultRef } | { address: string };

/** The largest chain id a deployment may follow (the tables keep it as int4). */
export const MAX_CHAIN_ID = 2 ** 31 - 1;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const VAULT_NAME_MESSAGE =
  'expected a vault id eip155:{chainId}:0x… (chainId a positive integer, 40 hex digits) or an address: 0x followed by 40 hex digits';

/** A vault id or a bare address, or null (any case in; lowercase out). */
export function parseVaultName(raw: string): VaultName | null {
  if (ADDRESS.test(raw)) return { address: raw.toLowerCase() };
  const ref = parseVaultId(raw);
  // The ledger and snapshot tables keep chain ids as int4.
  if (!ref || ref.chainId > MAX_CHAIN_ID) return null;
  return { id: vaultIdOf(ref), ref };
}

/** A vault id (`eip155:{chainId}:0x…`) or a bare address. */
export const vaultNameParam = z.string().transform((raw, ctx): VaultName => {
  const name = raw.length <= 80 ? parseVaultName(raw) : null;
  if (!name) {
    ctx.addIssue({ code: 'custom', message: VAULT_NAME_MESSAGE });
    return z.NEVER;
  }
  return name;
});

export const txHashParam = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, 'expected a transaction hash: 0x followed by 64 hex digits')
  .transform((h) => h.toLowerCase());

const MAX_MS = 8_640_000_000_000_000; // the largest JS Date
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** Unix milliseconds from a decimal integer, or from an ISO-8601 date / date-time with offset. */
export function parseTime(raw: string): number | null {
  if (/^\d{1,16}$/.test(raw)) {
    const n = Number(raw);
    return n <= MAX_MS ? n : null;
  }
  const m = ISO.exec(raw);
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '0', offset = 'Z'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCDate() !== day) return null; // e.g. 2024-02-30
  let offsetMs = 0;
  if (offset !== 'Z') {
    const oh = Number(offset.slice(1, 3));
    const om = Number(offset.slice(4, 6));
    if (oh > 23 || om > 59) return null;
    offsetMs = (offset[0] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  const ms = Number(frac.padEnd(3, '0').slice(0, 3));
  const t = Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMs;
  return t >= 0 && t <= MAX_MS ? t : null;
}

const timeParam = z.string().transform((raw, ctx) => {
  const t = parseTime(raw);
  if (t === null) {
    ctx.addIssue({
      code: 'custom',
      message:
        'expected Unix milliseconds (a non-negative integer) or an ISO-8601 date or date-time with offset, e.g. 2025-01-31 or 2025-01-31T12:00:00Z',
    });
    return z.NEVER;
  }
  return t;
});

const intParam = (min: number, max: number) =>
  z
    .string()
    .regex(/^(0|[1-9][0-9]{0,5})$/, `expected an integer from ${min} to ${max}`)
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, `expected an integer from ${min} to ${max}`)
        .max(max, `expected an integer from ${min} to ${max}`),
    );

const activitySet = new Set<string>(activityTypes);
/** `type=a,b` and/or `type=a&type=b`: the union, each from the activity vocabulary. */
const typeParam = z.union([z.string(), z.array(z.string())]).transform((values, ctx) => {
  const out = new Set<string>();
  for (const item of (Array.isArray(values) ? values : [values]).flatMap((v) => v.split(','))) {
    if (!activitySet.has(item)) {
      ctx.addIssue({
        code: 'custom',
        message: `unknown event type; expected one of ${activityTypes.join(', ')}`,
      });
      return z.NEVER;
    }
    out.add(item);
  }
  return [...out];
});

// Cursors: base64url of a versioned, kind-tagged text, so an events cursor never parses as a
// vaults cursor and a future format can coexist with this one.
const b64 = /^[A-Za-z0-9_-]{1,400}$/;
function unb64(raw: string): string | null {
  if (!b64.test(raw)) return null;
  return Buffer.from(raw, 'base64url').toString('latin1');
}

/** An events cursor: the last row's keyset position, time first (e2). */
export function encodeEventsCursor(k: LedgerKey): string {
  const text =
    k.ts === undefined
      ? `e1:${k.blockNumber}:${k.txIndex}:${k.logIndex}:${k.blockHash}`
      : `e2:${k.ts}:${k.blockNumber}:${k.txIndex}:${k.logIndex}:${k.blockHash}`;
  return Buffer.from(text, 'latin1').toString('base64url');
}
const U53 = '(0|[1-9]\\d{0,15})';
const I32 = '(-1|0|[1-9]\\d{0,9})';
/**
 * e2 (time first) is what the reader issues; e1 (no time) was issued before the ledger was
 * ordered by time and is still accepted, so a page held across an upgrade goes on where it was.
 */
const EVENTS_CURSOR = new RegExp(`^(?:e1|e2:${U53}):${U53}:${I32}:${I32}:(0x[0-9a-f]{64})$`);
const eventsCursorParam = z.string().transform((raw, ctx): LedgerKey => {
  const m = EVENTS_CURSOR.exec(unb64(raw) ?? '');
  const ts = m?.[1] === undefined ? undefined : Number(m[1]);
  const [blockNumber, txIndex, logIndex] = [Number(m?.[2]), Number(m?.[3]), Number(m?.[4])];
  if (
    !m ||
    !Number.isSafeInteger(blockNumber) ||
    (ts !== undefined && !Number.isSafeInteger(ts)) ||
    txIndex > 2 ** 31 - 1 ||
    logIndex > 2 ** 31 - 1
  ) {
    ctx.addIssue({ code: 'custom', message: 'invalid cursor: pass back the X-Next-Cursor value unchanged' });
    return z.NEVER;
  }
  const key = { blockNumber, txIndex, logIndex, blockHash: m[5]! };
  return ts === undefined ? key : { ts, ...key };
});

/** A transaction page's cursor: the last row's position in the transaction's order. */
export function encodeTxCursor(k: TxLedgerKey): string {
  const text = `t1:${k.blockNumber}:${k.txIndex}:${k.logIndex}:${k.blockHash}:${k.chainId}:${k.vault}`;
  return Buffer.from(text, 'latin1').toString('base64url');
}
const TX_CURSOR = new RegExp(`^t1:${U53}:${I32}:${I32}:(0x[0-9a-f]{64}):([1-9]\\d{0,9}):(0x[0-9a-f]{40})$`);
const txCursorParam = z.string().transform((raw, ctx): TxLedgerKey => {
  const m = TX_CURSOR.exec(unb64(raw) ?? '');
  const [blockNumber, txIndex, logIndex, chainId] = [
    Number(m?.[1]),
    Number(m?.[2]),
    Number(m?.[3]),
    Number(m?.[5]),
  ];
  if (
    !m ||
    !Number.isSafeInteger(blockNumber) ||
    txIndex > 2 ** 31 - 1 ||
    logIndex > 2 ** 31 - 1 ||
    chainId > 2 ** 31 - 1
  ) {
    ctx.addIssue({ code: 'custom', message: 'invalid cursor: pass back the X-Next-Cursor value unchanged' });
    return z.NEVER;
  }
  return { blockNumber, txIndex, logIndex, blockHash: m[4]!, chainId, vault: m[6]! };
});

/** A vaults page's cursor: the last vault's address and chain (v2; v1, the address alone, is still read). */
export function encodeVaultsCursor(after: VaultsKey): string {
  const text = after.chainId === undefined ? `v1:${after.vault}` : `v2:${after.vault}:${after.chainId}`;
  return Buffer.from(text, 'latin1').toString('base64url');
}
const vaultsCursorParam = z.string().transform((raw, ctx): VaultsKey => {
  const m = /^(?:v1:(0x[0-9a-f]{40})|v2:(0x[0-9a-f]{40}):([1-9]\d{0,9}))$/.exec(unb64(raw) ?? '');
  if (!m || (m[3] !== undefined && Number(m[3]) > MAX_CHAIN_ID)) {
    ctx.addIssue({ code: 'custom', message: 'invalid cursor: pass back the X-Next-Cursor value unchanged' });
    return z.NEVER;
  }
  // v1 (issued before vaults had a chain in their key): every chain of its address is past.
  return m[1] !== undefined ? { vault: m[1] } : { vault: m[2]!, chainId: Number(m[3]) };
});

/** `chainId=N`: an EIP-155 chain id. */
const chainIdParam = z
  .string()
  .regex(/^[1-9][0-9]{0,9}$/, `expected a chain id: an integer from 1 to ${MAX_CHAIN_ID}`)
  .transform(Number)
  .pipe(z.number().max(MAX_CHAIN_ID, `expected a chain id: an integer from 1 to ${MAX_CHAIN_ID}`));

const before = (lower: number | undefined, upper: number | undefined) =>
  lower === undefined || upper === undefined || lower < upper;

// OpenAPI text of the parameters: the schemas above validate, these words describe them.
const time = (bound: string) =>
  timeParam.optional().openapi({
    description: `${bound}: Unix milliseconds or ISO-8601 date / date-time with offset`,
    anyOf: [
      { type: 'string', pattern: '^[0-9]{1,16}$' },
      { type: 'string', format: 'date' },
      { type: 'string', format: 'date-time' },
    ],
    example: '2025-01-01T00:00:00Z',
  });
const int = (text: string, max: number, dflt: number) =>
  intParam(1, max)
    .default(dflt)
    .openapi({
      description: `${text} (default ${dflt}, at most ${max}; out of range is a 400, not clamped)`,
      type: 'integer',
      minimum: 1,
      maximum: max,
      default: dflt,
    });
const cursorText = {
  description: 'opaque cursor from the previous page’s X-Next-Cursor header',
  type: 'string',
  pattern: '^[A-Za-z0-9_-]{1,400}$',
} as const;

export const vaultPath = z.object({
  vault: vaultNameParam.openapi({
    param: { name: 'vault', in: 'path' },
    description:
      'the vault: its id, a CAIP-10 account id `eip155:{chainId}:0x…` (40 hex digits, any case), or its bare address `0x…`. A bare address names the vault at that address on whichever chain has one; when several chains do, the answer is 409 `ambiguous_vault` listing their ids (`error.candidates`): ask again with one of them',
    type: 'string',
    pattern: '^(eip155:[1-9][0-9]{0,9}:)?0x[0-9a-fA-F]{40}$',
    example: 'eip155:8453:0x5fbdb2315678afecb367f032d93f642f64180aa3',
  }),
});

export const txPath = z.object({
  hash: txHashParam.openapi({
    param: { name: 'hash', in: 'path' },
    description: 'transaction hash: 0x + 64 hex digits, any case',
  }),
});

export const eventsQuery = z
  .object({
    type: typeParam.optional().openapi({
      description: 'event types: comma-separated and/or repeated; any of them matches',
      param: { style: 'form', explode: true },
      type: 'array',
      items: { type: 'string', enum: [...activityTypes] },
    }),
    since: time('lower bound on ts, inclusive'),
    until: time('upper bound on ts, exclusive'),
    limit: int('rows per page', LIMITS.events.max, LIMITS.events.default),
    cursor: eventsCursorParam.optional().openapi(cursorText),
  })
  .refine((q) => before(q.since, q.until), { path: ['since'], message: 'must be earlier than until' });

export const equityQuery = z
  .object({
    from: time('window start, inclusive'),
    to: time('window end, exclusive'),
    // 1 stays valid: one bucket, the window's latest point (a current value; a gain needs two).
    points: int(
      'most points returned; the window’s first and last are always among them, 1 returns the latest alone',
      LIMITS.equity.maxPoints,
      LIMITS.equity.defaultPoints,
    ),
  })
  .refine((q) => before(q.from, q.to), { path: ['from'], message: 'must be earlier than to' });

export const txQuery = z.object({
  limit: int('rows per page', LIMITS.tx.max, LIMITS.tx.default),
  cursor: txCursorParam.optional().openapi(cursorText),
});

export const vaultsQuery = z.object({
  owner: addressParam.optional().openapi({
    description: 'owner address, any case',
    type: 'string',
    pattern: '^0x[0-9a-fA-F]{40}$',
  }),
  chainId: chainIdParam.optional().openapi({
    description: 'vaults of this chain only (EIP-155 chain id)',
    type: 'integer',
    minimum: 1,
    maximum: MAX_CHAIN_ID,
    example: 8453,
  }),
  limit: int('vaults per page', LIMITS.vaults.max, LIMITS.vaults.default),
  cursor: vaultsCursorParam.optional().openapi(cursorText),
});

/** Query parameters that may appear more than once (all others: once at most). */
export const REPEATABLE: ReadonlySet<string> = new Set(['type', 'vault']);

/**
 * A live stream's position, the `id` of its events and the `Last-Event-ID` it resumes from:
 * base64url of `c1:<commit>` (every event of that projection commit sent) or `c1:<commit>:<n>`
 * (its first n events for this stream sent). Commits are numbered in commit order (migration 0021).
 */
export interface StreamCursor {
  seq: bigint;
  /** Events of commit `seq` already sent; 0: all of them. */
  pos: number;
}

export function encodeStreamCursor(c: StreamCursor): string {
  return Buffer.from(c.pos > 0 ? `c1:${c.seq}:${c.pos}` : `c1:${c.seq}`, 'latin1').toString('base64url');
}

/** The cursor of a `Last-Event-ID`, or null when it is not one the reader issued. */
export function parseStreamCursor(raw: string): StreamCursor | null {
  const m = /^c1:(0|[1-9]\d{0,18}):?([1-9]\d{0,8})?$/.exec(unb64(raw) ?? '');
  if (!m) return null;
  const seq = BigInt(m[1]!);
  if (seq > 2n ** 63n - 1n) return null;
  return { seq, pos: m[2] === undefined ? 0 : Number(m[2]) };
}

/** Most vaults one `GET /v1/stream` may name. */
export const STREAM_MAX_VAULTS = 100;

/**
 * `vault=a,b` and/or `vault=a&vault=b`: the vaults a multi-vault stream follows, each a vault id
 * or a bare address (the vaults at that address on every chain), as their canonical text (ids with
 * a lowercase address, addresses lowercase).
 */
const vaultsParam = z.union([z.string(), z.array(z.string())]).transform((values, ctx) => {
  const out = new Set<string>();
  for (const item of (Array.isArray(values) ? values : [values]).flatMap((v) => v.split(','))) {
    const name = item.length <= 80 ? parseVaultName(item) : null;
    if (!name) {
      ctx.addIssue({
        code: 'custom',
        message: `expected vaults: each ${VAULT_NAME_MESSAGE.slice('expected '.length)}`,
      });
      return z.NEVER;
    }
    out.add('id' in name ? name.id : name.address);
  }
  if (out.size > STREAM_MAX_VAULTS) {
    ctx.addIssue({ code: 'custom', message: `at most ${STREAM_MAX_VAULTS} vaults; leave it out for all` });
    return z.NEVER;
  }
  return [...out];
});

export const streamQuery = z.object({
  vault: vaultsParam.optional().openapi({
    description: `vaults to follow: comma-separated and/or repeated, at most ${STREAM_MAX_VAULTS}; absent: every vault. Each is a vault id \`eip155:{chainId}:0x…\` (that vault) or a bare address (the vaults at that address on every chain, those created later included: a stream never answers 409)`,
    param: { style: 'form', explode: true },
    type: 'array',
    items: { type: 'string', pattern: '^(eip155:[1-9][0-9]{0,9}:)?0x[0-9a-fA-F]{40}$' },
    maxItems: STREAM_MAX_VAULTS,
  }),
});
