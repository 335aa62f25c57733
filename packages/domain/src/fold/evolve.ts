import { divRound, SCALE, tokenValue } from '../math/fixed.js';
import type { VaultRecord } from '../records/envelope.js';
import { DEFAULT_PERFORMANCE_FEE_BPS } from '../records/payloads.js';
import { applyContext, applyHoldings, type Draft, requireContextToken, shift } from './context.js';
import { FoldError } from './errors.js';
import { settleHighWater } from './fees.js';
import { lpBlockEnd, lpEvent } from './lp.js';
import { blockReturnIndex, type ValuedFlow } from './return-index.js';
import {
  type Address,
  type BlockFlow,
  copyState,
  type FlowSource,
  NOTHING_HELD,
  type Reconciliation,
  type UnpricedFlow,
  type VaultState,
} from './state.js';
import { computeValueUsd } from './valuation.js';

const ONE = 10n ** 18n;

/**
 * Starts a vault's state from its `vault.created` record (refuses anything else: 'not-created').
 * token0 and token1 must be in the record's context.
 */
export function createVaultState(record: VaultRecord): VaultState {
  if (record.type !== 'vault.created') {
    throw new FoldError('not-created', `${record.type} for vault ${record.vault} before vault.created`);
  }
  const p = record.payload;
  const ts = record.blockTimestamp * 1000;
  // Copied into the shape every later step has (copyState): the fold's copies stay monomorphic.
  const d: Draft = copyState({
    chainId: record.chainId,
    vault: record.vault,
    owner: p.owner,
    strategy: p.strategy,
    pool: p.pool,
    token0: p.token0,
    token1: p.token1,
    createdAt: ts,
    updatedAt: ts,
    blockNumber: record.blockNumber,
    records: 1,
    exitRequested: false,
    performanceFeeBps: p.performanceFeeBps ?? DEFAULT_PERFORMANCE_FEE_BPS,
    exited: false,
    suspension: null,
    tokens: {},
    pools: {},
    ...NOTHING_HELD,
    returnIndex: SCALE,
  });
  applyContext(d, record.context);
  requireContextToken(record.context, p.token0);
  requireContextToken(record.context, p.token1);
  applyHoldings(d, record.context);
  d.valueUsd = computeValueUsd(d);
  // Created inside a block: the block starts from nothing (no sub-period, index 1). Tokens sent
  // to the address before the vault existed are booked like any unexplained inflow.
  if (record.lastInBlock) endBlock(d, null, emptyScratch());
  else d.blockStart = { end: null, flows: [] };
  return d;
}

/** Folds records into a state from scratch or onward: `state` undefined means a new vault. */
export function foldRecord(state: VaultState | undefined, record: VaultRecord): VaultState {
  return state ? evolve(state, record) : createVaultState(record);
}

/**
 * The fold step: pure, total over what the chain accepted, returns a new state sharing unchanged
 * maps with the old one. Order inside a record:
 * (1) context — prices and pool slot0, marking the benchmark basket to market;
 * (2) holdings — balances, pending rewards and positions become what the chain holds at the block,
 *     and valueUsd is computed from them;
 * (3) payload — flows (capital in/out, fees charged, benchmark, high water), the book's token
 *     movements and the vault's flags, as the events say, without judging them; flows of a token
 *     that never had a valid price wait (`unpriced`) and are booked first at its first valid one;
 * (4) on the vault's last record of the block: reconcile the book with the holdings.
 * Refuses only records that break the log's own rules (errors.ts); the input state is never
 * modified.
 */
export function evolve(state: VaultState, record: VaultRecord): VaultState {
  if (record.type === 'vault.created') {
    throw new FoldError('already-created', `vault ${record.vault} already exists`);
  }
  if (record.type === 'revert') {
    throw new FoldError('revert-not-folded', 'revert records are applied by re-folding the vault');
  }
  if (record.vault !== state.vault || record.chainId !== state.chainId) {
    throw new FoldError(
      'wrong-vault',
      `record for ${record.chainId}:${record.vault}, state is ${state.vault}`,
    );
  }
  if (record.blockNumber < state.blockNumber) {
    throw new FoldError('out-of-order', `block ${record.blockNumber} after block ${state.blockNumber}`);
  }
  // A block whose last record never reached the fold (dead-lettered) ends when a record of a
  // later block arrives: its records carry its end holdings already, so it closes as it stands.
  if (state.blockStart && record.blockNumber > state.blockNumber) state = closeBlock(state);
  const d: Draft = copyState(state);
  d.updatedAt = record.blockTimestamp * 1000;
  d.blockNumber = record.blockNumber;
  d.records = state.records + 1;
  d.reconciled = NOTHING_HELD.reconciled;
  applyContext(d, record.context);
  applyHoldings(d, record.context);
  // valueUsd is a function of these five maps alone, and they are replaced only when something
  // in them changed: a vault's later records in one block (same context) skip the revaluation.
  const moved =
    d.tokens !== state.tokens ||
    d.pools !== state.pools ||
    d.idle !== state.idle ||
    d.pendingRewards !== state.pendingRewards ||
    d.positions !== state.positions;
  d.valueUsd = moved ? computeValueUsd(d) : state.valueUsd;
  // Every record of a block is valued at the block's end with only its own flows so far: the
  // block, not the record, is the step of the return, and a flow's value "just before" it is
  // known only at the block's end. The block's flows are kept (in blockStart) until then.
  // (The usual record is alone in its block: it allocates nothing for this.)
  const open = state.blockStart;
  const flows = open ? [...open.flows] : emptyScratch();
  if (d.unpriced.length > 0) bookUnpriced(d, flows);
  applyPayload(d, record, flows);
  lpEvent(d, record, state.strategy);
  if (record.lastInBlock) endBlock(d, open ? open.end : state, flows);
  else if (!open) d.blockStart = { end: state, flows: [...flows] };
  else if (flows.length > open.flows.length) d.blockStart = { end: open.end, flows };
  return d;
}

/**
 * Ends a vault's open block as it stands (a state at a block end is returned as is): what a
 * record of a later block does first when the open block's last record never reached the fold
 * (a dead letter). Its holdings are the block's end already (every record of a block carries
 * them), so the book is reconciled against them — the lost record's flows are booked as
 * reconciliations — and the block's flows, its high water and basket, and its return are settled as at any block end.
 * The result's `reconciled` lists what the close booked.
 */
export function closeBlock(state: VaultState): VaultState {
  const open = state.blockStart;
  if (!open) return state;
  const d: Draft = copyState(state);
  d.reconciled = NOTHING_HELD.reconciled;
  endBlock(d, open.end, [...open.flows]);
  return d;
}

/**
 * A vault's block end (its last record of the block folded, or the block closed): reconciles the
 * book with the holdings, settles the block's flows again from its start (`start`, the previous
 * block end; null for a vault created in the block) and chains the return index over the block.
 */
function endBlock(d: Draft, start: VaultState | null, flows: BlockFlow[]): void {
  reconcile(d, flows);
  // One flow was applied against the right value already (the block's end value ∓ itself).
  if (flows.length > 1) settleBlock(d, start, flows);
  d.returnIndex = blockIndex(d, start, flows);
  lpBlockEnd(d, start);
  d.blockStart = undefined;
}

/**
 * The return index over a block (see VaultState.returnIndex), net of the fee accrued
 * (return-index.ts `blockReturnIndex`). Per record, the later flows of a block read as gains or
 * losses (a vault funded by two deposits in one block lost half its index); a fee counted over the
 * block's start value skewed it (deposit 9,000 then a fee of 100 from 1,000: 0.90 instead of 0.99).
 */
function blockIndex(d: Draft, start: VaultState | null, flows: readonly BlockFlow[]): Fixed {
  const rate = d.performanceFeeBps;
  const valued =
    flows.length === 0
      ? NO_FLOWS
      : flows.map((f) => ({ kind: f.kind, valueUsd: usd(d, f.token, f.raw), rateBps: f.rateBps ?? rate }));
  const from = start
    ? { valueUsd: start.valueUsd, highWaterUsd: start.highWaterUsd, rateBps: start.performanceFeeBps }
    : { valueUsd: 0n, highWaterUsd: 0n, rateBps: rate };
  const end = { valueUsd: d.valueUsd, highWaterUsd: d.highWaterUsd, rateBps: rate };
  return blockReturnIndex(start ? start.returnIndex : d.returnIndex, from, end, valued);
}

/** A block without flows (the usual mark): one shared empty list. */
const NO_FLOWS: readonly ValuedFlow[] = [];

/** The flows of a record alone in its block so far: one array reused (folds are synchronous). */
const scratch: BlockFlow[] = [];
const emptyScratch = (): BlockFlow[] => {
  scratch.length = 0;
  return scratch;
};

/**
 * The high water and the benchmark basket at a block's end, settled again from the block's
 * start over its flows in order. One context a block: inside it only flows move the value, so
 * the value just before flow k is the block's end value less flows k… (the block's earnings
 * count before its first flow, as its return does). Each flow then moves the high water and the basket
 * as inflow / outflow / a fee charge do on their own — for a block of one flow, the same figures.
 */
function settleBlock(d: Draft, start: VaultState | null, flows: readonly BlockFlow[]): void {
  const values = flows.map((f) => usd(d, f.token, f.raw));
  const before: Fixed[] = new Array(flows.length);
  let v = d.valueUsd;
  for (let k = flows.length - 1; k >= 0; k--) {
    v -= flows[k]!.kind === 'in' ? values[k]! : -values[k]!;
    before[k] = v;
  }
  const bases: FlowBases = { highWaterUsd: start?.highWaterUsd ?? 0n, benchmark: start?.benchmark ?? {} };
  for (let k = 0; k < flows.length; k++) moveBases(bases, flows[k]!, values[k]!, before[k]!);
  d.highWaterUsd = bases.highWaterUsd;
  d.benchmark = bases.benchmark;
}

/** What capital flows move: the performance fee's basis (high water) and the benchmark basket. */
type FlowBases = Pick<Draft, 'highWaterUsd' | 'benchmark'>;

/**
 * How one capital flow of value `w` moves the high water and the benchmark basket, the vault
 * worth `before` just before it: capital in adds to both; capital out scales both by
 * (1 − w / before); a fee charge raises the high water by the gain it settled, net of the charge (fees.ts).
 */
function moveBases(m: FlowBases, f: BlockFlow, w: Fixed, before: Fixed): void {
  if (f.kind === 'in') {
    m.highWaterUsd += w;
    m.benchmark = { ...m.benchmark, [f.token]: (m.benchmark[f.token] ?? 0n) + f.raw * ONE };
  } else if (f.kind === 'out') {
    if (before > 0n && w > 0n) {
      m.benchmark = scaleBasket(m.benchmark, before - w, before);
      m.highWaterUsd = divRound(m.highWaterUsd * (before - w), before);
    }
  } else m.highWaterUsd = settleHighWater(m.highWaterUsd, before, w, f.rateBps);
}

/**
 * A capital flow of the record being folded: moves the high water and the basket against the block's
 * end value ∓ the flow (the value just before it when no later flow of the block follows; a block
 * of several is settled again at its end, `settleBlock`), and joins the block's flows.
 */
function recordFlow(d: Draft, f: BlockFlow, w: Fixed, flows: BlockFlow[]): void {
  moveBases(d, f, w, f.kind === 'in' ? d.valueUsd - w : d.valueUsd + w);
  flows.push(f);
}

/** The basket × keep / before, entries that round to 0 dropped. */
function scaleBasket(
  basket: Readonly<Record<Address, bigint>>,
  keep: Fixed,
  before: Fixed,
): Record<Address, bigint> {
  const out: Record<Address, bigint> = {};
  for (const t in basket) {
    const h = divRound(basket[t as Address]! * keep, before);
    if (h !== 0n) out[t as Address] = h;
  }
  return out;
}

function applyPayload(
  d: Draft,
  r: Exclude<VaultRecord, { type: 'vault.created' | 'revert' }>,
  flows: BlockFlow[],
): void {
  switch (r.type) {
    case 'deposit': {
      const { token, amount } = r.payload;
      requireContextToken(r.context, token);
      d.book = shift(d.book, token, BigInt(amount));
      inflow(d, 'deposit', token, BigInt(amount), flows);
      d.exited = false;
      d.drain = null;
      return;
    }
    case 'withdrawal': {
      const { token, amount } = r.payload;
      requireContextToken(r.context, token);
      d.book = shift(d.book, token, -BigInt(amount));
      outflow(d, 'withdrawal', token, BigInt(amount), flows);
      // The owner acted after the drain (a loss found at this block's end flags it again).
      d.drain = null;
      return;
    }
    case 'position.opened':
      moveBook(d, -BigInt(r.payload.amount0), -BigInt(r.payload.amount1));
      d.exited = false;
      return;
    case 'position.resized':
      moveBook(d, -BigInt(r.payload.amount0Delta), -BigInt(r.payload.amount1Delta));
      return;
    case 'position.rebalanced': {
      const p = r.payload;
      moveBook(d, BigInt(p.amount0Out) - BigInt(p.amount0In), BigInt(p.amount1Out) - BigInt(p.amount1In));
      return;
    }
    case 'position.closed':
    case 'fees.collected':
      // Fees collected on a closed position go to idle like any other collect.
      moveBook(d, BigInt(r.payload.amount0), BigInt(r.payload.amount1));
      return;
    case 'rewards.accrued':
      // Pending rewards are read from the chain (holdings); accruing moves no tokens.
      requireContextToken(r.context, r.payload.rewardToken);
      return;
    case 'rewards.claimed': {
      const { rewardToken, amount } = r.payload;
      requireContextToken(r.context, rewardToken);
      d.book = shift(d.book, rewardToken, BigInt(amount));
      return;
    }
    case 'fee.charged': {
      const { token, amount } = r.payload;
      requireContextToken(r.context, token);
      d.book = shift(d.book, token, -BigInt(amount));
      feeCharged(d, token, BigInt(amount), d.performanceFeeBps, flows);
      return;
    }
    case 'fee.rate.set':
      d.performanceFeeBps = r.payload.performanceFeeBps;
      return;
    case 'transfer.received': {
      // Capital in at its own place in the block (not performance), as a deposit is; it does not
      // put an exited vault back to work (the owner did not fund it).
      const { token, amount } = r.payload;
      requireContextToken(r.context, token);
      d.book = shift(d.book, token, BigInt(amount));
      inflow(d, 'received', token, BigInt(amount), flows);
      return;
    }
    case 'position.received': {
      // Liquidity minted for the vault by someone else: capital in at its own place in the block,
      // what the pool took for it (the position itself is in the holdings from this block on).
      // Nothing moves through idle, so the book is untouched; an exited vault stays exited.
      const p = r.payload;
      const pool = r.context.pools.find((x) => x.address === p.pool);
      if (!pool)
        throw new FoldError('unknown-pool', `position.received: pool ${p.pool} is not in the context`);
      requireContextToken(r.context, pool.token0);
      requireContextToken(r.context, pool.token1);
      inflow(d, 'received', pool.token0, BigInt(p.amount0), flows);
      inflow(d, 'received', pool.token1, BigInt(p.amount1), flows);
      return;
    }
    case 'swap': {
      // Idle tokens traded in the vault's pool: the book moves, no capital flow (its cost is the
      // value it gives up, in the holdings and the LP figures).
      const p = r.payload;
      requireContextToken(r.context, p.tokenIn);
      requireContextToken(r.context, p.tokenOut);
      d.book = shift(shift(d.book, p.tokenIn, -BigInt(p.amountIn)), p.tokenOut, BigInt(p.amountOut));
      return;
    }
    // The contract enforces its own transitions; the fold records what the chain did.
    case 'suspended':
      d.suspension = { reason: r.payload.reason, since: d.suspension?.since ?? d.updatedAt };
      return;
    case 'resumed':
      d.suspension = null;
      return;
    case 'exit.requested':
      d.exitRequested = true;
      d.drain = null;
      return;
    case 'exit.completed':
      d.exitRequested = false;
      d.exited = true;
      return;
    case 'strategy.selected':
      d.strategy = r.payload.strategy;
      return;
    case 'mark':
      return;
    default:
      // Every record type is folded: a type added to the vocabulary without a case fails to compile.
      r satisfies never;
  }
}

function usd(d: Draft, token: Address, raw: bigint) {
  const t = d.tokens[token];
  if (!t) throw new FoldError('unknown-token', `token ${token} has no price`);
  return tokenValue(raw, t.decimals, t.price);
}

/** Position events move the vault's own pool tokens (one pool per vault). */
function moveBook(d: Draft, delta0: bigint, delta1: bigint): void {
  d.book = shift(shift(d.book, d.token0, delta0), d.token1, delta1);
}

/**
 * Whether `token` never had a valid price (its feed answered no price at every block read so
 * far: price 0, context.ts). A valid price is never 0, and once read it is kept through later
 * non-answers, so this holds only before the token's first valid price.
 */
function neverPriced(d: Draft, token: Address): boolean {
  const t = d.tokens[token];
  if (!t) throw new FoldError('unknown-token', `token ${token} has no price`);
  return t.price === 0n;
}

/** A flow of a never-priced token waits for its first valid price (state.ts UnpricedFlow). */
function wait(d: Draft, source: FlowSource, token: Address, raw: bigint, rateBps?: number): null {
  const f: UnpricedFlow = { source, token, raw, blockNumber: d.blockNumber };
  d.unpriced = [...d.unpriced, rateBps === undefined ? f : { ...f, rateBps }];
  return null;
}

/**
 * Books the waiting flows of every token whose first valid price this record's context brought,
 * in their log order, as flows of this block, before the record's own: capital in and out, the
 * high water, the basket and the fees charged take them at this price — the value of the tokens
 * they brought appears in this block together with them, so the return index and netUsd read
 * it as capital, not as a gain (and no H·ΔP market move: the basket never held them at price 0).
 */
function bookUnpriced(d: Draft, flows: BlockFlow[]): void {
  let priced = false;
  for (const f of d.unpriced) if (!neverPriced(d, f.token)) priced = true;
  if (!priced) return;
  const waiting = d.unpriced;
  d.unpriced = waiting.filter((f) => neverPriced(d, f.token));
  for (const f of waiting) {
    if (neverPriced(d, f.token)) continue;
    if (f.source === 'fee') feeCharged(d, f.token, f.raw, f.rateBps ?? d.performanceFeeBps, flows);
    else if (f.source === 'withdrawal') outflow(d, f.source, f.token, f.raw, flows);
    else if (f.source === 'unexplainedOut') loss(d, f.token, f.raw, false);
    else inflow(d, f.source, f.token, f.raw, flows);
  }
}

/**
 * Capital in: value at this block's price, summed by where it came from (the owner's deposit,
 * received from others, unexplained); the basket and the high water grow with it. null: the
 * token has no valid price yet, the flow waits for it (`unpriced`).
 */
function inflow(d: Draft, source: FlowSource, token: Address, raw: bigint, flows: BlockFlow[]): Fixed | null {
  if (raw > 0n && neverPriced(d, token)) return wait(d, source, token, raw);
  const value = usd(d, token, raw);
  d.capitalInUsd += value;
  if (source === 'deposit') d.depositedUsd += value;
  else if (source === 'received') d.receivedUsd += value;
  else d.unexplainedInUsd += value;
  if (raw > 0n) recordFlow(d, { kind: 'in', token, raw, rateBps: d.performanceFeeBps }, value, flows);
  return value;
}

/**
 * Capital out of value W: the basket and the high water scale by (1 − W/V), V the value just before
 * the flow. Holdings are end-of-block, so V = valueUsd (after) + W when no later flow of the
 * block follows; when one does, `settleBlock` settles the block again at its end. null: the token
 * has no valid price yet, the flow waits for it (`unpriced`).
 */
function outflow(
  d: Draft,
  source: FlowSource,
  token: Address,
  raw: bigint,
  flows: BlockFlow[],
): Fixed | null {
  if (raw > 0n && neverPriced(d, token)) return wait(d, source, token, raw);
  const w = usd(d, token, raw);
  d.capitalOutUsd += w;
  if (raw > 0n) recordFlow(d, { kind: 'out', token, raw, rateBps: d.performanceFeeBps }, w, flows);
  return w;
}

/**
 * An outflow no event explains (`unexplainedOut`): a loss, not capital out — the value left the
 * vault and nothing the owner did took it, so netUsd drops by it (the identity netUsd = value +
 * out − in holds: the value fell, no flow moved), the return index reads it as return, and the
 * high water and the basket do not shrink (a loss must be recovered before a fee is due again).
 * Flags the vault (`drain`) when `flag`: at the block it was found, not when a waiting one is
 * valued at its token's first price. null: the token has no valid price yet (it waits).
 */
function loss(d: Draft, token: Address, raw: bigint, flag: boolean): Fixed | null {
  const value = neverPriced(d, token) ? wait(d, 'unexplainedOut', token, raw) : usd(d, token, raw);
  d.lostUsd += value ?? 0n;
  const was = d.drain;
  if (flag || was)
    d.drain = {
      since: was ? was.since : d.updatedAt,
      blockNumber: was ? was.blockNumber : d.blockNumber,
      lostUsd: (was ? was.lostUsd : 0n) + (value ?? 0n),
    };
  return value;
}

/** A performance fee charged at `rateBps` (the vault's rate when the chain charged it). */
function feeCharged(d: Draft, token: Address, raw: bigint, rateBps: number, flows: BlockFlow[]): void {
  if (raw > 0n && neverPriced(d, token)) {
    wait(d, 'fee', token, raw, rateBps);
    return;
  }
  const charge = usd(d, token, raw);
  d.taxedUsd += charge;
  if (raw > 0n) recordFlow(d, { kind: 'fee', token, raw, rateBps }, charge, flows);
}

/**
 * What the events do not explain — tokens sent straight to the vault, or gone without an event —
 * is the difference between the balances read (idle) and the book. An inflow is capital in (like
 * a deposit: it is not performance; `unexplainedInUsd`); a shortfall is a loss (`loss`: netUsd
 * drops by it, the vault is flagged — a drain never reads as a withdrawal). Both identities hold
 * exactly. The book then equals the holdings. `reconciled` lists what was booked (the projector
 * writes a `balance.reconciled` row, bookedAs capitalIn or loss).
 */
function reconcile(d: Draft, flows: BlockFlow[]): void {
  const book = d.book;
  const idle = d.idle;
  d.book = idle;
  // The usual case: the book is the holdings already (a record that moved nothing, or events
  // that explain every change): nothing to book, no allocation.
  if (book === idle) return;
  const differ: Address[] = [];
  for (const token in idle)
    if (idle[token as Address] !== (book[token as Address] ?? 0n)) differ.push(token as Address);
  for (const token in book)
    if (!(token in idle) && book[token as Address] !== 0n) differ.push(token as Address);
  if (differ.length === 0) return;
  // Booked in address order (the capital flows of one record compound: the order is part of the result).
  const booked: Reconciliation[] = [];
  for (const token of differ.sort()) {
    const diff = (idle[token] ?? 0n) - (book[token] ?? 0n);
    const valueUsd = diff > 0n ? inflow(d, 'unexplainedIn', token, diff, flows) : loss(d, token, -diff, true);
    booked.push({ token, amount: diff, valueUsd });
  }
  d.reconciled = booked;
}

type Fixed = bigint;
