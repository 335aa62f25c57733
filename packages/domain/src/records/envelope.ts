import { z } from 'zod';
import { MAX_TICK } from '../math/tick-math.js';
import { type ValuationContext, valuationContext } from './context.js';
import { type Payload, payloadSchemas, type RecordType } from './payloads.js';
import { address, hash32, PATTERNS } from './primitives.js';

/**
 * 3: every record carries `seq`, the vault's sequence number (see below).
 * 2: the context carries the vault's holdings read from the chain and each price's feed, age and
 * heartbeat; `lastInBlock` marks where the fold reconciles with them. Version 2 records still
 * decode, as unsequenced (no `seq`, no gap check: the projector applies them as before). A log of
 * version 1 is migrated by `vault-yield reindex` (a new topic read from the chain); the projector
 * dead-letters records of any other version as undecodable.
 */
export const SCHEMA_VERSION = 3 as const;
/** The previous version, still decoded (unsequenced). */
export const UNSEQUENCED_SCHEMA_VERSION = 2 as const;

const envelopeBase = {
  schemaVersion: z.union([z.literal(SCHEMA_VERSION), z.literal(UNSEQUENCED_SCHEMA_VERSION)]),
  /**
   * Schema 3 (required; absent in schema 2): the vault's sequence number, 1 for its first record,
   * then +1 per record the indexer publishes for the vault, in log order, marks and reverts
   * included. Assigned by the indexer and kept with its checkpoint, so a record republished after
   * a crash carries the same number. A revert takes the next number like any record (above every
   * number of the orphaned blocks); the canonical records after it continue from there, so the
   * numbers of a vault only ever grow along the log. The projector folds `seq = last + 1`, skips
   * `seq ≤ last` (duplicates), and holds the vault at `seq > last + 1` (a gap: a lost record);
   * for a revert the condition is `last ≥ payload.fromSeq − 1` (only what precedes the orphaned
   * blocks must be folded: the records it voids, and numbers of blocks never published, may be
   * missing).
   */
  seq: z.number().int().positive().optional(),
  chainId: z.number().int().positive(),
  blockNumber: z.number().int().nonnegative(),
  blockHash: hash32,
  /** Unix seconds, from the block header. */
  blockTimestamp: z.number().int().nonnegative(),
  /**
   * Transaction hash. Synthesised records: ZERO_HASH for a `mark` (at most one per vault per
   * block: its cadence, a range flip, a stale feed, or tokens that left the vault in a block
   * without its events); for a `revert`, the first orphaned block's hash, so a revert never shares its identity
   * with a mark of the same vault at the common ancestor.
   */
  txHash: hash32,
  txIndex: z.number().int().min(-1),
  /** Log index within the block; -1 for synthesised records. */
  logIndex: z.number().int().min(-1),
  vault: address,
  /**
   * True on the vault's last record of its block (marks and reverts always): the context is the
   * state after the block, so only there does the vault's book meet its holdings, and the fold
   * reconciles the two (books what the events do not explain).
   */
  lastInBlock: z.boolean(),
  context: valuationContext,
};

function variant<T extends RecordType>(type: T) {
  return z.object({ ...envelopeBase, type: z.literal(type), payload: payloadSchemas[type] });
}

/**
 * One record of the event log (the Kafka topic), keyed by `vault`. Identity:
 * (chainId, blockHash, txHash, logIndex, vault) — `vault` is part of it because synthesised
 * records share tx/log positions across vaults. Duplicates are expected and harmless.
 */
export const vaultRecord = z
  .discriminatedUnion('type', [
    variant('vault.created'),
    variant('deposit'),
    variant('withdrawal'),
    variant('position.opened'),
    variant('position.resized'),
    variant('position.rebalanced'),
    variant('position.closed'),
    variant('fees.collected'),
    variant('rewards.accrued'),
    variant('rewards.claimed'),
    variant('fee.charged'),
    variant('suspended'),
    variant('resumed'),
    variant('exit.requested'),
    variant('exit.completed'),
    variant('strategy.selected'),
    variant('fee.rate.set'),
    variant('transfer.received'),
    variant('position.received'),
    variant('swap'),
    variant('mark'),
    variant('revert'),
  ])
  .superRefine((r, ctx) => {
    if ((r.seq === undefined) !== (r.schemaVersion === UNSEQUENCED_SCHEMA_VERSION))
      ctx.addIssue({
        code: 'custom',
        path: ['seq'],
        message: `schema ${SCHEMA_VERSION} requires seq; schema ${UNSEQUENCED_SCHEMA_VERSION} has none`,
      });
  });

export type VaultRecord = z.output<typeof vaultRecord>;
export type VaultRecordOf<T extends RecordType> = Extract<VaultRecord, { type: T }>;

/** Stable identity string of a record; the ledger is unique on it. */
export function recordId(
  r: Pick<VaultRecord, 'chainId' | 'blockHash' | 'txHash' | 'logIndex' | 'vault'>,
): string {
  return `${r.chainId}:${r.blockHash}:${r.txHash}:${r.logIndex}:${r.vault}`;
}

/** The parts of a `recordId` (hashes and addresses hold no ':'); null for anything else. */
export function recordIdParts(
  id: string,
): Pick<VaultRecord, 'chainId' | 'blockHash' | 'txHash' | 'logIndex' | 'vault'> | null {
  const [chainId, blockHash, txHash, logIndex, vault, ...rest] = id.split(':');
  if (rest.length > 0 || vault === undefined) return null;
  return {
    chainId: Number(chainId),
    blockHash: blockHash as VaultRecord['blockHash'],
    txHash: txHash as VaultRecord['txHash'],
    logIndex: Number(logIndex),
    vault: vault as VaultRecord['vault'],
  };
}

/** A context object's JSON, by identity: producers share one context among a block's records. */
const contextJson = new WeakMap<object, string>();
/** Stands for the context while the rest of the record is serialised (JSON escapes the NULs). */
const CONTEXT_MARK = '\u0000context\u0000';
/** How the marked context field reads in the JSON: never inside a string value (its quotes would be escaped). */
const MARKED_FIELD = `"context":${JSON.stringify(CONTEXT_MARK)}`;

/**
 * Serialises a record for the log (UTF-8 JSON): exactly `JSON.stringify(r)`, with the valuation
 * context (most of a record's bytes, the same object for many records) serialised once per
 * context object. Contexts are treated as immutable once a record holds them.
 */
export function encodeRecord(r: VaultRecord): Buffer {
  return Buffer.from(recordJson(r));
}

/** encodeRecord's text, for callers that write many records into one buffer. */
export function recordJson(r: VaultRecord): string {
  const ctx = r.context;
  if (typeof ctx !== 'object' || ctx === null) return JSON.stringify(r);
  let json = contextJson.get(ctx);
  if (json === undefined) {
    json = JSON.stringify(ctx);
    contextJson.set(ctx, json);
  }
  // The spread keeps the context key where it was, so the key order is the record's own.
  const text = JSON.stringify({ ...r, context: CONTEXT_MARK });
  const at = text.indexOf(MARKED_FIELD);
  if (at < 0) return JSON.stringify(r);
  const value = at + '"context":'.length;
  return text.slice(0, value) + json + text.slice(value + JSON.stringify(CONTEXT_MARK).length);
}

export type DecodeResult = { ok: true; record: VaultRecord } | { ok: false; reason: string };

/** A record without its context and payload: identity, order, sequence, type and vault. */
export type RecordHead = Omit<VaultRecord, 'context' | 'payload'>;
export type HeadResult = { ok: true; head: RecordHead } | { ok: false; reason: string };

/*
 * A hand-written validator for the hot path (the projector decodes every record of the log): it
 * accepts exactly the inputs `vaultRecord` accepts and returns the same output (addresses and
 * hashes lowercased, unknown keys stripped, keys in schema order), about ten times faster than
 * zod's generic parser. It only answers "valid, here is the record" or "not valid"; the reason for
 * a rejection always comes from zod itself. decode.test.ts checks the equivalence with fast-check.
 * Any change to the schemas (primitives, context, payloads, envelope) must be mirrored here.
 */
type Json = Record<string, unknown>;
type Hex = `0x${string}`;
/** Thrown (as a sentinel, never escaping fastParseRecord) on the first check that fails. */
const REJECT = Symbol('reject');
const { address: HEX40, hash32: HEX64, uint: UINT, int: INT, decimal: DECIMAL } = PATTERNS;

function obj(v: unknown): Json {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw REJECT;
  return v as Json;
}
function int(v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max) throw REJECT;
  return v;
}
function bool(v: unknown): boolean {
  if (typeof v !== 'boolean') throw REJECT;
  return v;
}
function str(v: unknown, min: number, max: number): string {
  if (typeof v !== 'string' || v.length < min || v.length > max) throw REJECT;
  return v;
}
function match(v: unknown, re: RegExp): string {
  if (typeof v !== 'string' || !re.test(v)) throw REJECT;
  return v;
}
const addr = (v: unknown) => match(v, HEX40).toLowerCase() as Hex;
const hash = (v: unknown) => match(v, HEX64).toLowerCase() as Hex;
const uint = (v: unknown) => match(v, UINT);
const tickOf = (v: unknown) => int(v, -MAX_TICK, MAX_TICK);
function list<T>(v: unknown, min: number, item: (x: unknown) => T): T[] {
  if (!Array.isArray(v) || v.length < min) throw REJECT;
  const out = new Array<T>(v.length);
  for (let i = 0; i < v.length; i++) out[i] = item(v[i]);
  return out;
}
function ticks<T extends { tickLower: number; tickUpper: number }>(p: T): T {
  if (!(p.tickLower < p.tickUpper)) throw REJECT;
  return p;
}
const amounts = (p: Json) => ({
  positionId: uint(p.positionId),
  amount0: uint(p.amount0),
  amount1: uint(p.amount1),
});
const empty = (v: unknown) => {
  obj(v);
  return {};
};

const fastPayloads: { [T in RecordType]: (v: unknown) => z.output<(typeof payloadSchemas)[T]> } = {
  'vault.created': (v) => {
    const p = obj(v);
    return {
      owner: addr(p.owner),
      strategy: str(p.strategy, 1, 32),
      token0: addr(p.token0),
      token1: addr(p.token1),
      pool: addr(p.pool),
      ...(p.performanceFeeBps === undefined
        ? {}
        : { performanceFeeBps: int(p.performanceFeeBps, 0, 10_000) }),
    };
  },
  deposit: (v) => {
    const p = obj(v);
    return { from: addr(p.from), token: addr(p.token), amount: uint(p.amount) };
  },
  withdrawal: (v) => {
    const p = obj(v);
    return { to: addr(p.to), token: addr(p.token), amount: uint(p.amount) };
  },
  'position.opened': (v) => {
    const p = obj(v);
    return ticks({
      positionId: uint(p.positionId),
      pool: addr(p.pool),
      tickLower: tickOf(p.tickLower),
      tickUpper: tickOf(p.tickUpper),
      liquidity: uint(p.liquidity),
      amount0: uint(p.amount0),
      amount1: uint(p.amount1),
    });
  },
  'position.resized': (v) => {
    const p = obj(v);
    return {
      positionId: uint(p.positionId),
      liquidity: uint(p.liquidity),
      amount0Delta: match(p.amount0Delta, INT),
      amount1Delta: match(p.amount1Delta, INT),
    };
  },
  'position.rebalanced': (v) => {
    const p = obj(v);
    return ticks({
      positionId: uint(p.positionId),
      tickLower: tickOf(p.tickLower),
      tickUpper: tickOf(p.tickUpper),
      liquidity: uint(p.liquidity),
      amount0Out: uint(p.amount0Out),
      amount1Out: uint(p.amount1Out),
      amount0In: uint(p.amount0In),
      amount1In: uint(p.amount1In),
    });
  },
  'position.closed': (v) => amounts(obj(v)),
  'fees.collected': (v) => amounts(obj(v)),
  'rewards.accrued': (v) => {
    const p = obj(v);
    return { rewardToken: addr(p.rewardToken), amount: uint(p.amount) };
  },
  'rewards.claimed': (v) => {
    const p = obj(v);
    return { rewardToken: addr(p.rewardToken), amount: uint(p.amount) };
  },
  'fee.charged': (v) => {
    const p = obj(v);
    return { token: addr(p.token), amount: uint(p.amount), recipient: addr(p.recipient) };
  },
  suspended: (v) => ({ reason: str(obj(v).reason, 1, 500) }),
  resumed: empty,
  'exit.requested': empty,
  'exit.completed': empty,
  'strategy.selected': (v) => ({ strategy: str(obj(v).strategy, 1, 32) }),
  'fee.rate.set': (v) => ({ performanceFeeBps: int(obj(v).performanceFeeBps, 0, 10_000) }),
  'transfer.received': (v) => {
    const p = obj(v);
    return { from: addr(p.from), token: addr(p.token), amount: uint(p.amount) };
  },
  'position.received': (v) => {
    const p = obj(v);
    return ticks({
      from: addr(p.from),
      pool: addr(p.pool),
      tickLower: tickOf(p.tickLower),
      tickUpper: tickOf(p.tickUpper),
      liquidity: uint(p.liquidity),
      amount0: uint(p.amount0),
      amount1: uint(p.amount1),
    });
  },
  swap: (v) => {
    const p = obj(v);
    return {
      tokenIn: addr(p.tokenIn),
      amountIn: uint(p.amountIn),
      tokenOut: addr(p.tokenOut),
      amountOut: uint(p.amountOut),
    };
  },
  mark: empty,
  revert: (v) => {
    const p = obj(v);
    const out = { fromBlock: int(p.fromBlock, 0), orphanedBlockHashes: list(p.orphanedBlockHashes, 1, hash) };
    return p.fromSeq === undefined ? out : { ...out, fromSeq: int(p.fromSeq, 1) };
  },
};
const fastPayload = new Map<unknown, (v: unknown) => unknown>(Object.entries(fastPayloads));

function tokenOf(v: unknown): ValuationContext['tokens'][number] {
  const t = obj(v);
  return {
    address: addr(t.address),
    symbol: str(t.symbol, 1, 32),
    decimals: int(t.decimals, 0, 36),
    priceUsd: match(t.priceUsd, DECIMAL),
    feed: addr(t.feed),
    priceUpdatedAt: int(t.priceUpdatedAt, 0),
    heartbeat: int(t.heartbeat, 1),
  };
}
function amountOf(v: unknown): ValuationContext['holdings']['balances'][number] {
  const a = obj(v);
  return { token: addr(a.token), amount: uint(a.amount) };
}
function holdingOf(v: unknown): ValuationContext['holdings']['positions'][number] {
  const p = obj(v);
  return ticks({
    id: uint(p.id),
    pool: addr(p.pool),
    tickLower: tickOf(p.tickLower),
    tickUpper: tickOf(p.tickUpper),
    liquidity: uint(p.liquidity),
    owed0: uint(p.owed0),
    owed1: uint(p.owed1),
  });
}
function holdingsOf(v: unknown): ValuationContext['holdings'] {
  const h = obj(v);
  return {
    balances: list(h.balances, 0, amountOf),
    positions: list(h.positions, 0, holdingOf),
    pendingRewards: list(h.pendingRewards, 0, amountOf),
  };
}
function poolOf(v: unknown): ValuationContext['pools'][number] {
  const p = obj(v);
  return {
    address: addr(p.address),
    venue: str(p.venue, 1, 64),
    feeTier: int(p.feeTier, 0),
    sqrtPriceX96: uint(p.sqrtPriceX96),
    tick: tickOf(p.tick),
    token0: addr(p.token0),
    token1: addr(p.token1),
  };
}

/**
 * `vaultRecord.safeParse(json)` for valid input, faster: the parsed record, or undefined when
 * zod would reject `json` (ask zod for the reason).
 */
export function fastParseRecord(json: unknown): VaultRecord | undefined {
  try {
    const r = obj(json);
    // The discriminator first, as the union does; an unknown type is a rejection.
    const payload = fastPayload.get(r.type);
    if (!payload) return undefined;
    const version = r.schemaVersion;
    if (version !== SCHEMA_VERSION && version !== UNSEQUENCED_SCHEMA_VERSION) return undefined;
    // Schema 3 has a seq, schema 2 none (see envelopeBase.seq).
    if ((r.seq === undefined) !== (version === UNSEQUENCED_SCHEMA_VERSION)) return undefined;
    const seq = r.seq === undefined ? undefined : int(r.seq, 1);
    const ctx = obj(r.context);
    return {
      schemaVersion: version,
      ...(seq === undefined ? {} : { seq }),
      chainId: int(r.chainId, 1),
      blockNumber: int(r.blockNumber, 0),
      blockHash: hash(r.blockHash),
      blockTimestamp: int(r.blockTimestamp, 0),
      txHash: hash(r.txHash),
      txIndex: int(r.txIndex, -1),
      logIndex: int(r.logIndex, -1),
      vault: addr(r.vault),
      lastInBlock: bool(r.lastInBlock),
      context: {
        tokens: list(ctx.tokens, 1, tokenOf),
        pools: list(ctx.pools, 0, poolOf),
        holdings: holdingsOf(ctx.holdings),
      },
      type: r.type,
      payload: payload(r.payload),
    } as VaultRecord;
  } catch (e) {
    if (e === REJECT) return undefined;
    throw e;
  }
}

/**
 * `payloadSchemas[type].safeParse(v)` for valid input, faster (the indexer checks every decoded
 * log's payload): the parsed payload, or undefined when zod would reject `v` (ask zod for the reason).
 */
export function fastParsePayload<T extends RecordType>(type: T, v: unknown): Payload<T> | undefined {
  try {
    return fastPayloads[type](v);
  } catch (e) {
    if (e === REJECT) return undefined;
    throw e;
  }
}

/** Parses a JSON record (codec.ts `decodeRecord` takes either encoding); never throws. */
export function decodeJsonRecord(buf: Buffer): DecodeResult {
  let json: unknown;
  try {
    json = JSON.parse(buf.toString('utf8'));
  } catch (e) {
    return { ok: false, reason: `not JSON: ${(e as Error).message}` };
  }
  const fast = fastParseRecord(json);
  if (fast) return { ok: true, record: fast };
  const parsed = vaultRecord.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, reason: `schema: ${issue?.path.join('.') || '(root)'}: ${issue?.message}` };
  }
  return { ok: true, record: parsed.data };
}
