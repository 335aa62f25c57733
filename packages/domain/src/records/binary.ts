import { MAX_TICK } from '../math/tick-math.js';
import type { ValuationContext } from './context.js';
import {
  type DecodeResult,
  type HeadResult,
  type RecordHead,
  SCHEMA_VERSION,
  UNSEQUENCED_SCHEMA_VERSION,
  type VaultRecord,
} from './envelope.js';
import type { RecordType } from './payloads.js';
import { PATTERNS } from './primitives.js';

/**
 * The binary encoding of a record (the same schema as the JSON one, a quarter of its bytes).
 *
 * Why: a JSON record is ≈ 2 KB, most of it the same addresses written out again and again (a
 * token's address appears in tokens, pools, balances, rewards and the payload) and the
 * projector's costliest step is parsing and checking that text (#14). Here every address is
 * written once, in a table, and referenced by its index; hashes are raw bytes; integers are
 * varints; amounts stay decimal digits (what the record holds, so decoding makes no BigInt).
 *
 * Layout (v1): 0xB1 · schemaVersion · type · flags (bit 0 lastInBlock, bit 1 the payload's trailing
 * optional field is present) · [seq, schema 3] · chainId ·
 * blockNumber · blockTimestamp · blockHash (32) · txHash (32) · txIndex+1 · logIndex+1 ·
 * addresses (n, n × 20 bytes) · vault (index) · context · payload. Integers are unsigned LEB128
 * varints of (value − the field's minimum), at most 2^53 − 1 (so a txIndex or logIndex of
 * 2^53 − 1, which the schema allows and no chain reaches, is refused at encode); strings and digit strings a varint byte length and
 * their bytes. The first byte never starts JSON text (0xB1 is a UTF-8 continuation byte), so a
 * log may hold both encodings and the decoder tells them apart by it.
 *
 * Decoding accepts exactly the records the schema accepts (the same checks as the JSON path:
 * digits canonical, ticks ordered and in range, lengths in bounds, no byte left over) and
 * returns the same object, keys in schema order, addresses and hashes lowercase. binary.test.ts
 * checks both with fast-check.
 */

export const BINARY_MAGIC = 0xb1;

/** Type codes: positions in this list, fixed forever (append only). */
const TYPES: readonly RecordType[] = [
  'vault.created',
  'deposit',
  'withdrawal',
  'position.opened',
  'position.resized',
  'position.rebalanced',
  'position.closed',
  'fees.collected',
  'rewards.accrued',
  'rewards.claimed',
  'fee.charged',
  'suspended',
  'resumed',
  'exit.requested',
  'exit.completed',
  'strategy.selected',
  'mark',
  'revert',
  'fee.rate.set',
  'transfer.received',
  'position.received',
  'swap',
];
const TYPE_CODE = new Map(TYPES.map((t, i) => [t, i]));

/**
 * A payload field: its key and how it is written. `{ nat }` is a bounded integer; `{ trailing }`
 * an optional last field of the payload, written only when present, and then flagged (flags bit
 * 1): records written before the field existed keep their bytes, and a record cut before the
 * field is still refused.
 */
type Kind =
  | 'addr'
  | 'uint'
  | 'int'
  | 'tick'
  | { text: [number, number] }
  | { nat: [number, number] }
  | { trailing: { nat: [number, number] } };
type Fields = readonly (readonly [string, Kind])[];

const amounts: Fields = [
  ['positionId', 'uint'],
  ['amount0', 'uint'],
  ['amount1', 'uint'],
];
/** Payload fields in schema order (payloads.ts); `revert` is written by hand (an optional key). */
const PAYLOADS: { [T in Exclude<RecordType, 'revert'>]: Fields } = {
  'vault.created': [
    ['owner', 'addr'],
    ['strategy', { text: [1, 32] }],
    ['token0', 'addr'],
    ['token1', 'addr'],
    ['pool', 'addr'],
    ['performanceFeeBps', { trailing: { nat: [0, 10_000] } }],
  ],
  deposit: [
    ['from', 'addr'],
    ['token', 'addr'],
    ['amount', 'uint'],
  ],
  withdrawal: [
    ['to', 'addr'],
    ['token', 'addr'],
    ['amount', 'uint'],
  ],
  'position.opened': [
    ['positionId', 'uint'],
    ['pool', 'addr'],
    ['tickLower', 'tick'],
    ['tickUpper', 'tick'],
    ['liquidity', 'uint'],
    ['amount0', 'uint'],
    ['amount1', 'uint'],
  ],
  'position.resized': [
    ['positionId', 'uint'],
    ['liquidity', 'uint'],
    ['amount0Delta', 'int'],
    ['amount1Delta', 'int'],
  ],
  'position.rebalanced': [
    ['positionId', 'uint'],
    ['tickLower', 'tick'],
    ['tickUpper', 'tick'],
    ['liquidity', 'uint'],
    ['amount0Out', 'uint'],
    ['amount1Out', 'uint'],
    ['amount0In', 'uint'],
    ['amount1In', 'uint'],
  ],
  'position.closed': amounts,
  'fees.collected': amounts,
  'rewards.accrued': [
    ['rewardToken', 'addr'],
    ['amount', 'uint'],
  ],
  'rewards.claimed': [
    ['rewardToken', 'addr'],
    ['amount', 'uint'],
  ],
  'fee.charged': [
    ['token', 'addr'],
    ['amount', 'uint'],
    ['recipient', 'addr'],
  ],
  suspended: [['reason', { text: [1, 500] }]],
  resumed: [],
  'exit.requested': [],
  'exit.completed': [],
  'strategy.selected': [['strategy', { text: [1, 32] }]],
  mark: [],
  'fee.rate.set': [['performanceFeeBps', { nat: [0, 10_000] }]],
  'transfer.received': [
    ['from', 'addr'],
    ['token', 'addr'],
    ['amount', 'uint'],
  ],
  'position.received': [
    ['from', 'addr'],
    ['pool', 'addr'],
    ['tickLower', 'tick'],
    ['tickUpper', 'tick'],
    ['liquidity', 'uint'],
    ['amount0', 'uint'],
    ['amount1', 'uint'],
  ],
  swap: [
    ['tokenIn', 'addr'],
    ['amountIn', 'uint'],
    ['tokenOut', 'addr'],
    ['amountOut', 'uint'],
  ],
};
/** Types whose payload ends with a `trailing` field. */
const TRAILING = new Set<RecordType>(
  (Object.keys(PAYLOADS) as (keyof typeof PAYLOADS)[]).filter((t) =>
    PAYLOADS[t].some(([, k]) => typeof k === 'object' && 'trailing' in k),
  ),
);
/** Payloads whose ticks must be ordered (tickLower < tickUpper), as the schema refines them. */
const TICKED = new Set<RecordType>(['position.opened', 'position.rebalanced', 'position.received']);

const { uint: UINT, int: INT, decimal: DECIMAL } = PATTERNS;

/** Thrown inside the codec with what was wrong; decodeBinaryRecord turns it into a reason. */
class Bad extends Error {}

// ------------------------------------------------------------------------------------ encoding

/** Where records are encoded (encoding is synchronous, so one suffices); grows as needed. */
let scratch = Buffer.allocUnsafe(4096);

class Writer {
  private buf = scratch;
  private at = 0;
  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(next, 0, 0, this.at);
    this.buf = next;
    scratch = next;
  }
  byte(b: number): void {
    this.room(1);
    this.buf[this.at++] = b;
  }
  /** A safe integer ≥ min, as the varint of (v − min). */
  nat(v: unknown, min = 0, max = Number.MAX_SAFE_INTEGER): void {
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min || v > max)
      throw new Bad(`expected an integer in ${min}..${max}, got ${String(v)}`);
    let x = v - min;
    // The decoder reads at most 2^53 − 1 exactly (txIndex = MAX_SAFE_INTEGER would need 2^53).
    if (x > Number.MAX_SAFE_INTEGER) throw new Bad(`integer ${v} out of the encoding's range`);
    this.room(8);
    while (x >= 0x80) {
      this.buf[this.at++] = (x % 0x80) | 0x80;
      x = Math.floor(x / 0x80);
    }
    this.buf[this.at++] = x;
  }
  /** Text known to be ASCII (checked by the caller), a byte per character. */
  ascii(s: string): void {
    const n = s.length;
    this.nat(n);
    this.room(n);
    const buf = this.buf;
    const at = this.at;
    for (let i = 0; i < n; i++) buf[at + i] = s.charCodeAt(i);
    this.at = at + n;
  }
  text(s: unknown, min: number, max: number): void {
    if (typeof s !== 'string' || s.length < min || s.length > max)
      throw new Bad(`expected a string of ${min}..${max} characters`);
    // ASCII (symbols, venues, most strategy ids) is its own UTF-8.
    if (isAscii(s)) {
      this.ascii(s);
      return;
    }
    // Chain strings come from UTF-8 bytes; a lone surrogate cannot survive UTF-8.
    if (LONE_SURROGATE.test(s)) throw new Bad('a string holds a lone surrogate');
    const n = Buffer.byteLength(s, 'utf8');
    this.nat(n);
    this.room(n);
    this.at += this.buf.write(s, this.at, 'utf8');
  }
  /** `0x` and 2 × `bytes` hex digits of any case (PATTERNS.hash32 for 32 bytes), as bytes. */
  hex(s: unknown, bytes: number): void {
    if (!hexShaped(s, 2 * bytes)) throw new Bad(`expected hex, got ${String(s)}`);
    this.room(bytes);
    const buf = this.buf;
    const at = this.at;
    let bad = 0;
    // Checked and written in one loop: cheaper than a regex and a Buffer.write (and its slice).
    for (let i = 0; i < bytes; i++) {
      const hi = nibble(s.charCodeAt(2 + 2 * i));
      const lo = nibble(s.charCodeAt(3 + 2 * i));
      bad |= hi | lo;
      buf[at + i] = (hi << 4) | lo;
    }
    if (bad & NOT_HEX) throw new Bad(`expected hex, got ${s}`);
    this.at = at + bytes;
  }
  digits(s: unknown, re: RegExp): void {
    if (typeof s !== 'string' || !re.test(s)) throw new Bad(`expected a number string, got ${String(s)}`);
    this.ascii(s);
  }
  /** A copy of what was written (the scratch buffer is reused by the next record). */
  done(): Buffer {
    const out = Buffer.allocUnsafe(this.at);
    this.buf.copy(out, 0, 0, this.at);
    return out;
  }
}

/** A hex digit's value by its char code (ASCII); NOT_HEX for any other character. */
const NOT_HEX = 16;
const NIBBLE = new Uint8Array(128).fill(NOT_HEX);
for (let i = 0; i < 16; i++) {
  NIBBLE['0123456789abcdef'.charCodeAt(i)] = i;
  NIBBLE['0123456789ABCDEF'.charCodeAt(i)] = i;
}
const nibble = (c: number): number => (c < 128 ? NIBBLE[c]! : NOT_HEX);
/** `0x` and `digits` characters more (whether they are hex digits is checked as they are read). */
const hexShaped = (s: unknown, digits: number): s is string =>
  typeof s === 'string' && s.length === 2 + digits && s.charCodeAt(0) === 0x30 && s.charCodeAt(1) === 0x78;
/** PATTERNS.address, by hand: -1 when `a` is no address, else whether it has uppercase digits. */
function addressCase(a: unknown): -1 | 0 | 1 {
  if (!hexShaped(a, 40)) return -1;
  let upper = 0;
  for (let i = 2; i < 42; i++) {
    const c = a.charCodeAt(i);
    if (nibble(c) === NOT_HEX) return -1;
    if (c >= 0x41 && c <= 0x46) upper = 1;
  }
  return upper as 0 | 1;
}
function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Addresses of a record in order of first appearance, lowercase (the table's order). */
class Table {
  readonly list: string[] = [];
  /** Each spelling met, as given, and its index: a record names few addresses, many times. */
  private readonly spellings: unknown[] = [];
  private readonly indexes: number[] = [];

  of(a: unknown): number {
    // A linear scan: a dozen entries at most, mostly the very same strings (cheaper than a Map).
    const spellings = this.spellings;
    for (let i = 0; i < spellings.length; i++) if (spellings[i] === a) return this.indexes[i]!;
    const upper = addressCase(a);
    if (upper < 0) throw new Bad(`expected an address, got ${String(a)}`);
    const key = upper ? (a as string).toLowerCase() : (a as string);
    let i = this.list.indexOf(key);
    if (i < 0) {
      i = this.list.length;
      this.list.push(key);
    }
    spellings.push(a);
    this.indexes.push(i);
    return i;
  }
}

function list<T>(v: readonly T[]): readonly T[] {
  if (!Array.isArray(v)) throw new Bad(`expected a list, got ${String(v)}`);
  return v;
}

function writeField(w: Writer, t: Table, kind: Kind, v: unknown): void {
  if (kind === 'addr') w.nat(t.of(v));
  else if (kind === 'uint') w.digits(v, UINT);
  else if (kind === 'int') w.digits(v, INT);
  else if (kind === 'tick') w.nat(v, -MAX_TICK, MAX_TICK);
  else if ('text' in kind) w.text(v, kind.text[0], kind.text[1]);
  else if ('nat' in kind) w.nat(v, kind.nat[0], kind.nat[1]);
  else if (v !== undefined) w.nat(v, kind.trailing.nat[0], kind.trailing.nat[1]);
}

/**
 * The record's binary encoding. Throws on a record the schema would refuse (the indexer only
 * publishes valid ones: a throw here is a bug to see, never a record to lose quietly).
 */
export function encodeBinaryRecord(r: VaultRecord): Buffer {
  try {
    return encode(r);
  } catch (e) {
    if (e instanceof Bad) throw new Error(`cannot encode record ${r.type} of ${r.vault}: ${e.message}`);
    throw e;
  }
}

function encode(r: VaultRecord): Buffer {
  const w = new Writer();
  const t = new Table();
  // The addresses first (the table precedes what refers to it): walk the record once to index
  // them in the order the fields are written below, then write (looking each up again).
  const c = r.context;
  const tokens = list(c.tokens);
  const pools = list(c.pools);
  const balances = list(c.holdings.balances);
  const positions = list(c.holdings.positions);
  const rewards = list(c.holdings.pendingRewards);
  t.of(r.vault);
  for (const x of tokens) {
    t.of(x.address);
    t.of(x.feed);
  }
  for (const x of pools) {
    t.of(x.address);
    t.of(x.token0);
    t.of(x.token1);
  }
  for (const x of balances) t.of(x.token);
  for (const x of positions) t.of(x.pool);
  for (const x of rewards) t.of(x.token);
  const fields = r.type === 'revert' ? [] : PAYLOADS[r.type];
  const payload = r.payload as Record<string, unknown>;
  for (const [key, kind] of fields) if (kind === 'addr') t.of(payload[key]);

  const code = TYPE_CODE.get(r.type);
  if (code === undefined) throw new Bad(`unknown type ${String(r.type)}`);
  w.byte(BINARY_MAGIC);
  w.byte(r.schemaVersion);
  w.nat(code);
  let trailing = false;
  for (const [key, kind] of fields)
    if (typeof kind === 'object' && 'trailing' in kind) trailing = payload[key] !== undefined;
  w.byte((r.lastInBlock ? 1 : 0) | (trailing ? 2 : 0));
  if (r.schemaVersion === SCHEMA_VERSION) w.nat(r.seq, 1);
  else if (r.schemaVersion !== UNSEQUENCED_SCHEMA_VERSION || r.seq !== undefined)
    throw new Bad(`schema ${String(r.schemaVersion)} with seq ${String(r.seq)}`);
  w.nat(r.chainId, 1);
  w.nat(r.blockNumber);
  w.nat(r.blockTimestamp);
  w.hex(r.blockHash, 32);
  w.hex(r.txHash, 32);
  w.nat(r.txIndex, -1);
  w.nat(r.logIndex, -1);
  w.nat(t.list.length);
  for (const a of t.list) w.hex(a, 20);
  w.nat(t.of(r.vault));

  if (tokens.length < 1) throw new Bad('a context lists at least one token');
  w.nat(tokens.length);
  for (const x of tokens) {
    w.nat(t.of(x.address));
    w.text(x.symbol, 1, 32);
    w.nat(x.decimals, 0, 36);
    w.digits(x.priceUsd, DECIMAL);
    w.nat(t.of(x.feed));
    w.nat(x.priceUpdatedAt);
    w.nat(x.heartbeat, 1);
  }
  w.nat(pools.length);
  for (const x of pools) {
    w.nat(t.of(x.address));
    w.text(x.venue, 1, 64);
    w.nat(x.feeTier);
    w.digits(x.sqrtPriceX96, UINT);
    w.nat(x.tick, -MAX_TICK, MAX_TICK);
    w.nat(t.of(x.token0));
    w.nat(t.of(x.token1));
  }
  w.nat(balances.length);
  for (const x of balances) {
    w.nat(t.of(x.token));
    w.digits(x.amount, UINT);
  }
  w.nat(positions.length);
  for (const x of positions) {
    if (!(x.tickLower < x.tickUpper)) throw new Bad('tickLower must be below tickUpper');
    w.digits(x.id, UINT);
    w.nat(t.of(x.pool));
    w.nat(x.tickLower, -MAX_TICK, MAX_TICK);
    w.nat(x.tickUpper, -MAX_TICK, MAX_TICK);
    w.digits(x.liquidity, UINT);
    w.digits(x.owed0, UINT);
    w.digits(x.owed1, UINT);
  }
  w.nat(rewards.length);
  for (const x of rewards) {
    w.nat(t.of(x.token));
    w.digits(x.amount, UINT);
  }

  if (r.type === 'revert') {
    const p = r.payload;
    w.nat(p.fromBlock);
    if (p.orphanedBlockHashes.length < 1) throw new Bad('a revert names at least one block');
    w.nat(p.orphanedBlockHashes.length);
    for (const h of p.orphanedBlockHashes) w.hex(h, 32);
    // 0: no fromSeq (a revert of schema 2); else fromSeq itself (≥ 1).
    if (p.fromSeq !== undefined && !(p.fromSeq >= 1)) throw new Bad(`fromSeq ${p.fromSeq}`);
    w.nat(p.fromSeq ?? 0);
  } else {
    if (TICKED.has(r.type) && !((payload.tickLower as number) < (payload.tickUpper as number)))
      throw new Bad('tickLower must be below tickUpper');
    for (const [key, kind] of fields) writeField(w, t, kind, payload[key]);
  }
  return w.done();
}

// ------------------------------------------------------------------------------------ decoding

const HEX_CHARS = Buffer.from('0123456789abcdef', 'latin1');

/**
 * Strings decoded before, by their bytes: a record's addresses, hashes, symbols, venues and digit
 * strings mostly repeat those of records before it (the same tokens and pools across vaults and
 * blocks, one block hash for every record of a block, a price for every vault holding the token,
 * a position's liquidity block after block). A direct-mapped table (a slot per hash of kind and
 * bytes, the bytes kept in one slab and compared in full before a hit counts) returns the string
 * made before instead of making it again: no allocation for a repeat, and equal strings are the
 * same string, which the fold's map lookups and comparisons then take at a pointer's cost.
 * Bounded (SLOTS × SLOT_BYTES), never grows; a collision only replaces the slot.
 */
const SLOT_BITS = 14;
const SLOTS = 1 << SLOT_BITS;
const SLOT_BYTES = 48;
const slab = new Uint8Array(SLOTS * SLOT_BYTES);
/** Per slot: its length (0: empty) and kind; the string. */
const slotLength = new Uint8Array(SLOTS);
const slotKind = new Uint8Array(SLOTS);
const slotString: (string | undefined)[] = new Array(SLOTS);
/** What bytes mean: the same bytes make a different string as hex, as text or as digits. */
const HEX = 1;
const TEXT = 2;
const DIGITS = 3;

/**
 * The slot of hex bytes (an address or a hash): their last four bytes, which a hash function
 * made (keccak) and so are as uniform as any hash of them would be — no pass over every byte.
 * (The first bytes are not: vanity addresses lead with zeros.) A collision costs a slot, never a
 * wrong string: `recall` compares every byte.
 */
function hexSlotOf(b: Uint8Array, from: number, n: number): number {
  const at = from + n - 4;
  const h = (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) ^ n;
  return (h ^ (h >>> SLOT_BITS) ^ (h >>> (2 * SLOT_BITS))) & (SLOTS - 1);
}

const FNV_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** The slot of an FNV-1a hash (seeded `FNV_BASIS ^ kind`, one `Math.imul(h ^ byte, FNV_PRIME)` a byte). */
const fnvSlot = (h: number): number => (h ^ (h >>> SLOT_BITS)) & (SLOTS - 1);

/** The slot of (kind, bytes) by FNV-1a. */
function slotOf(kind: number, b: Uint8Array, from: number, n: number): number {
  let h = FNV_BASIS ^ kind;
  for (let i = from; i < from + n; i++) h = Math.imul(h ^ b[i]!, FNV_PRIME);
  return fnvSlot(h);
}

/** The string kept for (kind, bytes), or undefined. */
function recall(slot: number, kind: number, b: Uint8Array, from: number, n: number): string | undefined {
  if (slotLength[slot] !== n || slotKind[slot] !== kind) return undefined;
  const at = slot * SLOT_BYTES;
  for (let i = 0; i < n; i++) if (slab[at + i] !== b[from + i]) return undefined;
  return slotString[slot];
}

function keep(slot: number, kind: number, b: Uint8Array, from: number, n: number, s: string): void {
  const at = slot * SLOT_BYTES;
  // Byte by byte: a subarray to `set` from would be an object a string.
  for (let i = 0; i < n; i++) slab[at + i] = b[from + i]!;
  slotLength[slot] = n;
  slotKind[slot] = kind;
  slotString[slot] = s;
}
/** Where hex text is built (2 + 2 × 32 bytes at most); decoding is synchronous, so one suffices. */
const SCRATCH = Buffer.from(`0x${'0'.repeat(64)}`, 'latin1');

class Reader {
  at = 0;
  /** The payload's trailing optional field is present (flags bit 1). */
  trailing = false;
  addrs: `0x${string}`[] = [];
  constructor(private readonly buf: Buffer) {}
  byte(): number {
    if (this.at >= this.buf.length) throw new Bad('ends early');
    return this.buf[this.at++]!;
  }
  nat(min = 0, max = Number.MAX_SAFE_INTEGER): number {
    let x = 0;
    let scale = 1;
    for (let i = 0; ; i++) {
      if (i === 8) throw new Bad(`varint too long at byte ${this.at}`);
      const b = this.byte();
      x += (b & 0x7f) * scale;
      if (b < 0x80) break;
      scale *= 0x80;
    }
    const v = x + min;
    if (x > Number.MAX_SAFE_INTEGER || !Number.isSafeInteger(v) || v > max)
      throw new Bad(`integer out of range at byte ${this.at}`);
    return v;
  }
  /** A list's length: each item takes at least one byte, so more than the bytes left is a lie. */
  count(): number {
    const n = this.nat();
    if (n > this.buf.length - this.at)
      throw new Bad(`a list of ${n} items in ${this.buf.length - this.at} bytes`);
    return n;
  }
  /** Moves past `n` bytes; returns where they start. */
  span(n: number): number {
    const from = this.at;
    if (from + n > this.buf.length) throw new Bad('ends early');
    this.at += n;
    return from;
  }
  /**
   * `0x` and the bytes in lowercase hex, as one flat string: a concatenation would make a rope
   * that the fold's map lookups and comparisons flatten again (measured: fold + rows 27 → 21 µs).
   * `known`: these bytes as decoded before (a head, then its whole record), taken as they are.
   */
  hex(bytes: number, known?: `0x${string}`): `0x${string}` {
    const from = this.span(bytes);
    return known ?? this.hexAt(from, bytes);
  }
  /** `hex` of bytes already passed (no bounds check: `from` comes from `span`). */
  hexAt(from: number, bytes: number): `0x${string}` {
    const b = this.buf;
    const slot = bytes >= 4 ? hexSlotOf(b, from, bytes) : slotOf(HEX, b, from, bytes);
    const known = recall(slot, HEX, b, from, bytes);
    if (known !== undefined) return known as `0x${string}`;
    for (let i = 0; i < bytes; i++) {
      const x = b[from + i]!;
      SCRATCH[2 + 2 * i] = HEX_CHARS[x >> 4]!;
      SCRATCH[3 + 2 * i] = HEX_CHARS[x & 15]!;
    }
    const made = SCRATCH.toString('latin1', 0, 2 + 2 * bytes) as `0x${string}`;
    keep(slot, HEX, b, from, bytes, made);
    return made;
  }
  text(min: number, max: number): string {
    const n = this.nat();
    const from = this.span(n);
    const slot = n <= SLOT_BYTES ? slotOf(TEXT, this.buf, from, n) : -1;
    // Bytes kept are bytes a string was accepted from: only its length is checked again (a field's bounds).
    let s = slot < 0 ? undefined : recall(slot, TEXT, this.buf, from, n);
    const made = s === undefined;
    s ??= this.buf.toString('utf8', from, from + n);
    if (s.length < min || s.length > max) throw new Bad(`string of ${s.length} characters at byte ${from}`);
    if (!made) return s;
    // Invalid UTF-8 would read as U+FFFD: accept only bytes that are their string's own encoding.
    if (s.includes('\ufffd') && !this.buf.subarray(from, from + n).equals(Buffer.from(s, 'utf8')))
      throw new Bad(`invalid UTF-8 at byte ${from}`);
    if (slot >= 0) keep(slot, TEXT, this.buf, from, n, s);
    return s;
  }
  /** A decimal digit string: canonical (no leading zero), optionally signed or with a fraction. */
  digits(kind: 'uint' | 'int' | 'decimal'): string {
    const n = this.nat();
    const from = this.span(n);
    const end = from + n;
    const b = this.buf;
    // Checked and hashed (slotOf's FNV-1a, byte by byte in order) in one pass.
    let h = FNV_BASIS ^ DIGITS;
    let i = from;
    if (kind === 'int' && i < end && b[i] === 0x2d) h = Math.imul(h ^ b[i++]!, FNV_PRIME);
    const first = i;
    for (; i < end; i++) {
      const c = b[i]!;
      if (c < 0x30 || c > 0x39) break;
      h = Math.imul(h ^ c, FNV_PRIME);
    }
    // Integer part: at least one digit, no leading zero.
    if (i === first || (b[first] === 0x30 && i - first > 1)) throw new Bad(`not a number at byte ${from}`);
    if (kind === 'decimal' && i < end && b[i] === 0x2e) {
      h = Math.imul(h ^ b[i++]!, FNV_PRIME);
      const dot = i;
      for (; i < end; i++) {
        const c = b[i]!;
        if (c < 0x30 || c > 0x39) break;
        h = Math.imul(h ^ c, FNV_PRIME);
      }
      if (i === dot || i - dot > 36) throw new Bad(`not a decimal at byte ${from}`);
    }
    if (i !== end) throw new Bad(`not a number at byte ${from}`);
    if (n > SLOT_BYTES) return b.toString('latin1', from, end);
    const slot = fnvSlot(h);
    const known = recall(slot, DIGITS, b, from, n);
    if (known !== undefined) return known;
    const made = b.toString('latin1', from, end);
    keep(slot, DIGITS, b, from, n, made);
    return made;
  }
  addr(): `0x${string}` {
    const i = this.nat();
    const a = this.addrs[i];
    if (a === undefined) throw new Bad(`address index ${i} past the table`);
    return a;
  }
  tick(): number {
    return this.nat(-MAX_TICK, MAX_TICK);
  }
  get end(): boolean {
    return this.at === this.buf.length;
  }
}

function readField(rd: Reader, kind: Kind): unknown {
  if (kind === 'addr') return rd.addr();
  if (kind === 'uint') return rd.digits('uint');
  if (kind === 'int') return rd.digits('int');
  if (kind === 'tick') return rd.tick();
  if ('text' in kind) return rd.text(kind.text[0], kind.text[1]);
  if ('nat' in kind) return rd.nat(kind.nat[0], kind.nat[1]);
  return rd.trailing ? rd.nat(kind.trailing.nat[0], kind.trailing.nat[1]) : undefined;
}

function ordered<T extends { tickLower: number; tickUpper: number }>(p: T): T {
  if (!(p.tickLower < p.tickUpper)) throw new Bad('tickLower must be below tickUpper');
  return p;
}

/**
 * The fields before the context: a record's identity, order, type and vault. `whole`: keep the
 * address table for the rest of the record (else only the vault's entry is read, the same checks
 * failing with the same reasons).
 */
function readHead(rd: Reader, whole: boolean, known?: RecordHead) {
  if (rd.byte() !== BINARY_MAGIC) throw new Bad('not a binary record');
  const schemaVersion = rd.byte();
  if (schemaVersion !== SCHEMA_VERSION && schemaVersion !== UNSEQUENCED_SCHEMA_VERSION)
    throw new Bad(`schema version ${schemaVersion}`);
  const type = TYPES[rd.nat()];
  if (type === undefined) throw new Bad('unknown type');
  const flags = rd.byte();
  if (flags > 3 || (flags > 1 && !TRAILING.has(type))) throw new Bad(`flags ${flags}`);
  rd.trailing = flags > 1;
  const seq = schemaVersion === SCHEMA_VERSION ? rd.nat(1) : undefined;
  const chainId = rd.nat(1);
  const blockNumber = rd.nat();
  const blockTimestamp = rd.nat();
  // The head decoded before (`decodeBinaryHead` of the same bytes) gives its hashes again.
  const blockHash = rd.hex(32, known?.blockHash);
  const txHash = rd.hex(32, known?.txHash);
  const txIndex = rd.nat(-1);
  const logIndex = rd.nat(-1);
  const count = rd.count();
  let vault: `0x${string}`;
  if (whole) {
    const addrs = new Array<`0x${string}`>(count);
    for (let i = 0; i < count; i++) addrs[i] = rd.hex(20);
    rd.addrs = addrs;
    vault = rd.addr();
  } else {
    const table = rd.span(count * 20);
    const i = rd.nat();
    if (i >= count) throw new Bad(`address index ${i} past the table`);
    vault = rd.hexAt(table + i * 20, 20);
  }
  const lastInBlock = (flags & 1) === 1;
  // Two literals, not `{ ...(seq === undefined ? {} : { seq }) }` (no `seq` key at all for an
  // unsequenced record): once optimised, V8 (Node 20) gives every object a spread builds a hidden
  // class of its own, and every later read of the record goes megamorphic. Key order as the JSON
  // path builds it (envelope.ts fastParseRecord).
  return seq === undefined
    ? {
        schemaVersion,
        chainId,
        blockNumber,
        blockHash,
        blockTimestamp,
        txHash,
        txIndex,
        logIndex,
        vault,
        lastInBlock,
        type,
      }
    : {
        schemaVersion,
        seq,
        chainId,
        blockNumber,
        blockHash,
        blockTimestamp,
        txHash,
        txIndex,
        logIndex,
        vault,
        lastInBlock,
        type,
      };
}

/**
 * Decodes a binary record (first byte BINARY_MAGIC); throws Bad with the reason. The head's fields
 * are listed again in the literal below on purpose: a record built by spreading the head object
 * decodes 50 % slower and folds slower too (bench:fold-ceiling: decode 8.9 → 13.1 µs, fold + rows
 * 26 → 31 µs): the objects' shapes differ.
 */
function decode(buf: Buffer, known?: RecordHead): VaultRecord {
  const rd = new Reader(buf);
  const {
    schemaVersion,
    seq,
    chainId,
    blockNumber,
    blockHash,
    blockTimestamp,
    txHash,
    txIndex,
    logIndex,
    vault,
    lastInBlock,
    type,
  } = readHead(rd, true, known);

  const tokens = new Array<ValuationContext['tokens'][number]>(rd.count());
  if (tokens.length < 1) throw new Bad('a context lists at least one token');
  for (let i = 0; i < tokens.length; i++)
    tokens[i] = {
      address: rd.addr(),
      symbol: rd.text(1, 32),
      decimals: rd.nat(0, 36),
      priceUsd: rd.digits('decimal'),
      feed: rd.addr(),
      priceUpdatedAt: rd.nat(),
      heartbeat: rd.nat(1),
    };
  const pools = new Array<ValuationContext['pools'][number]>(rd.count());
  for (let i = 0; i < pools.length; i++)
    pools[i] = {
      address: rd.addr(),
      venue: rd.text(1, 64),
      feeTier: rd.nat(),
      sqrtPriceX96: rd.digits('uint'),
      tick: rd.tick(),
      token0: rd.addr(),
      token1: rd.addr(),
    };
  const balances = new Array<ValuationContext['holdings']['balances'][number]>(rd.count());
  for (let i = 0; i < balances.length; i++) balances[i] = { token: rd.addr(), amount: rd.digits('uint') };
  const positions = new Array<ValuationContext['holdings']['positions'][number]>(rd.count());
  for (let i = 0; i < positions.length; i++)
    positions[i] = ordered({
      id: rd.digits('uint'),
      pool: rd.addr(),
      tickLower: rd.tick(),
      tickUpper: rd.tick(),
      liquidity: rd.digits('uint'),
      owed0: rd.digits('uint'),
      owed1: rd.digits('uint'),
    });
  const pendingRewards = new Array<ValuationContext['holdings']['pendingRewards'][number]>(rd.count());
  for (let i = 0; i < pendingRewards.length; i++)
    pendingRewards[i] = { token: rd.addr(), amount: rd.digits('uint') };

  let payload: Record<string, unknown>;
  if (type === 'revert') {
    const fromBlock = rd.nat();
    const hashes = new Array<`0x${string}`>(rd.count());
    if (hashes.length < 1) throw new Bad('a revert names at least one block');
    for (let i = 0; i < hashes.length; i++) hashes[i] = rd.hex(32);
    const fromSeq = rd.nat();
    payload =
      fromSeq === 0
        ? { fromBlock, orphanedBlockHashes: hashes }
        : { fromBlock, orphanedBlockHashes: hashes, fromSeq };
  } else {
    payload = {};
    for (const [key, kind] of PAYLOADS[type]) {
      const v = readField(rd, kind);
      if (v !== undefined) payload[key] = v;
    }
    if (TICKED.has(type)) ordered(payload as { tickLower: number; tickUpper: number });
  }
  if (!rd.end) throw new Bad(`${buf.length - rd.at} bytes left over`);
  const context = { tokens, pools, holdings: { balances, positions, pendingRewards } };
  // Key order as the JSON path builds it (envelope.ts fastParseRecord): ledger payload text and
  // re-encodings depend on it. Two literals, not a spread (see readHead).
  return (
    seq === undefined
      ? {
          schemaVersion,
          chainId,
          blockNumber,
          blockHash,
          blockTimestamp,
          txHash,
          txIndex,
          logIndex,
          vault,
          lastInBlock,
          context,
          type,
          payload,
        }
      : {
          schemaVersion,
          seq,
          chainId,
          blockNumber,
          blockHash,
          blockTimestamp,
          txHash,
          txIndex,
          logIndex,
          vault,
          lastInBlock,
          context,
          type,
          payload,
        }
  ) as VaultRecord;
}

/**
 * A record's head (everything before its context): what the projector needs of every record of a
 * batch before it folds any (grouping by vault, order, duplicates, sequence). The rest is decoded
 * record by record as it is folded, so a batch's decoded records die young instead of outliving
 * the batch. A head that decodes says nothing of the rest: `decodeBinaryRecord` may still refuse.
 */
export function decodeBinaryHead(bytes: Buffer): HeadResult {
  try {
    // No `seq` key at all for an unsequenced record, as in the whole record.
    return { ok: true, head: readHead(new Reader(bytes), false) as RecordHead };
  } catch (e) {
    if (e instanceof Bad) return { ok: false, reason: `binary: ${e.message}` };
    return { ok: false, reason: `binary: ${(e as Error).message ?? String(e)}` };
  }
}

/**
 * Parses a binary record; never throws (a bad record is a value the caller dead-letters).
 * `head`: what `decodeBinaryHead` gave for these same bytes — its hashes are taken, not read again.
 */
export function decodeBinaryRecord(bytes: Buffer, head?: RecordHead): DecodeResult {
  try {
    return { ok: true, record: decode(bytes, head) };
  } catch (e) {
    if (e instanceof Bad) return { ok: false, reason: `binary: ${e.message}` };
    return { ok: false, reason: `binary: ${(e as Error).message ?? String(e)}` };
  }
}
