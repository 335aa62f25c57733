import { divRound, maxFixed, tokenValue } from '../math/fixed.js';
import { getSqrtRatioAtTick } from '../math/tick-math.js';
import type { VaultRecord, VaultRecordOf } from '../records/envelope.js';
import { adjust, applyContext, type Draft, requireContextToken } from './context.js';
import { FoldError } from './errors.js';
import type { Address, Position, VaultState } from './state.js';
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
  const d: Draft = {
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
    suspension: null,
    tokens: {},
    pools: {},
    idle: {},
    pendingRewards: {},
    positions: {},
    benchmark: {},
    capitalInUsd: 0n,
    capitalOutUsd: 0n,
    taxedUsd: 0n,
    highWaterUsd: 0n,
    marketDeltaUsd: 0n,
    valueUsd: 0n,
  };
  applyContext(d, record.context);
  requireContextToken(record.context, p.token0);
  requireContextToken(record.context, p.token1);
  return d;
}

/** Folds records into a state from scratch or onward: `state` undefined means a new vault. */
export function foldRecord(state: VaultState | undefined, record: VaultRecord): VaultState {
  return state ? evolve(state, record) : createVaultState(record);
}

/**
 * The fold step: pure, returns a new state sharing unchanged maps with the old one.
 * Order inside a record: (1) context — prices and pool slot0 update, marking the benchmark basket
 * to market; (2) payload; (3) revaluation. Refuses impossible records with a FoldError (errors.ts);
 * the input state is never modified, so the caller keeps it on refusal.
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
  const d: Draft = { ...state };
  d.updatedAt = record.blockTimestamp * 1000;
  d.blockNumber = record.blockNumber;
  d.records = state.records + 1;
  applyContext(d, record.context);
  applyPayload(d, record);
  d.valueUsd = computeValueUsd(d);
  // after a charge the mark is the post-fee value, never lowered (fees.ts)
  if (record.type === 'fee.charged') d.highWaterUsd = maxFixed(d.highWaterUsd, d.valueUsd);
  return d;
}

function applyPayload(d: Draft, r: Exclude<VaultRecord, { type: 'vault.created' | 'revert' }>): void {
  switch (r.type) {
    case 'deposit':
      deposit(d, r);
      return;
    case 'withdrawal':
      withdrawal(d, r);
      return;
    case 'position.opened':
      opened(d, r);
      return;
    case 'position.resized': {
      const pos = position(d, r.payload.positionId);
      moveIdle(d, pos, -BigInt(r.payload.amount0Delta), -BigInt(r.payload.amount1Delta));
      setPosition(d, { ...pos, liquidity: BigInt(r.payload.liquidity) });
      return;
    }
    case 'position.rebalanced': {
      const p = r.payload;
      const pos = position(d, p.positionId);
      moveIdle(
        d,
        pos,
        BigInt(p.amount0Out) - BigInt(p.amount0In),
        BigInt(p.amount1Out) - BigInt(p.amount1In),
      );
      setPosition(d, withTicks(pos, p.tickLower, p.tickUpper, BigInt(p.liquidity)));
      return;
    }
    case 'position.closed': {
      const pos = position(d, r.payload.positionId);
      moveIdle(d, pos, BigInt(r.payload.amount0), BigInt(r.payload.amount1));
      const positions = { ...d.positions };
      delete positions[pos.id];
      d.positions = positions;
      return;
    }
    case 'fees.collected': {
      const pos = position(d, r.payload.positionId);
      moveIdle(d, pos, BigInt(r.payload.amount0), BigInt(r.payload.amount1));
      return;
    }
    case 'rewards.accrued':
      requireContextToken(r.context, r.payload.rewardToken);
      d.pendingRewards = adjust(
        d.pendingRewards,
        r.payload.rewardToken,
        BigInt(r.payload.amount),
        'insufficient-pending',
      );
      return;
    case 'rewards.claimed': {
      const { rewardToken, amount } = r.payload;
      requireContextToken(r.context, rewardToken);
      d.pendingRewards = adjust(d.pendingRewards, rewardToken, -BigInt(amount), 'insufficient-pending');
      d.idle = adjust(d.idle, rewardToken, BigInt(amount), 'insufficient-idle');
      return;
    }
    case 'fee.charged': {
      const { token, amount } = r.payload;
      requireContextToken(r.context, token);
      const raw = BigInt(amount);
      d.idle = adjust(d.idle, token, -raw, 'insufficient-idle');
      d.taxedUsd += usd(d, token, raw);
      return;
    }
    case 'suspended':
      if (d.suspension) throw new FoldError('invalid-transition', 'suspended while already suspended');
      d.suspension = { reason: r.payload.reason, since: d.updatedAt };
      return;
    case 'resumed':
      if (!d.suspension) throw new FoldError('invalid-transition', 'resumed while not suspended');
      d.suspension = null;
      return;
    case 'exit.requested':
      if (d.exitRequested) throw new FoldError('invalid-transition', 'exit.requested while exiting');
      d.exitRequested = true;
      return;
    case 'exit.completed':
      if (!d.exitRequested)
        throw new FoldError('invalid-transition', 'exit.completed without exit.requested');
      d.exitRequested = false;
      return;
    case 'strategy.selected':
      d.strategy = r.payload.strategy;
      return;
    case 'mark':
      return;
  }
}

function usd(d: Draft, token: Address, raw: bigint) {
  const t = d.tokens[token]!;
  return tokenValue(raw, t.decimals, t.price);
}

/** Deposit: idle, capital in, benchmark basket and high-water mark all grow by the deposit. */
function deposit(d: Draft, r: VaultRecordOf<'deposit'>): void {
  const { token, amount } = r.payload;
  requireContextToken(r.context, token);
  const raw = BigInt(amount);
  d.idle = adjust(d.idle, token, raw, 'insufficient-idle');
  const value = usd(d, token, raw);
  d.capitalInUsd += value;
  d.highWaterUsd += value;
  if (raw > 0n) d.benchmark = { ...d.benchmark, [token]: (d.benchmark[token] ?? 0n) + raw * ONE };
}

/** Withdrawal of value W from value V: capital out += W; basket and mark scale by (1 − W/V). */
function withdrawal(d: Draft, r: VaultRecordOf<'withdrawal'>): void {
  const { token, amount } = r.payload;
  requireContextToken(r.context, token);
  const raw = BigInt(amount);
  const before = computeValueUsd(d);
  d.idle = adjust(d.idle, token, -raw, 'insufficient-idle');
  const w = usd(d, token, raw);
  d.capitalOutUsd += w;
  if (before > 0n && w > 0n) {
    const keep = before - w;
    const benchmark: Record<Address, bigint> = {};
    for (const t in d.benchmark) {
      const h = divRound(d.benchmark[t as Address]! * keep, before);
      if (h !== 0n) benchmark[t as Address] = h;
    }
    d.benchmark = benchmark;
    d.highWaterUsd = divRound(d.highWaterUsd * keep, before);
  }
}

function opened(d: Draft, r: VaultRecordOf<'position.opened'>): void {
  const p = r.payload;
  if (d.positions[p.positionId])
    throw new FoldError('position-exists', `position ${p.positionId} is already open`);
  const pool = r.context.pools.find((x) => x.address === p.pool);
  if (!pool) throw new FoldError('unknown-pool', `pool ${p.pool} is not in the record's context`);
  requireContextToken(r.context, pool.token0);
  requireContextToken(r.context, pool.token1);
  const base = {
    id: p.positionId,
    pool: p.pool,
    token0: pool.token0,
    token1: pool.token1,
    openedAt: d.updatedAt,
  };
  const pos = withTicks(base, p.tickLower, p.tickUpper, BigInt(p.liquidity));
  moveIdle(d, pos, -BigInt(p.amount0), -BigInt(p.amount1));
  setPosition(d, pos);
}

function position(d: Draft, id: string): Position {
  const pos = d.positions[id];
  if (!pos) throw new FoldError('position-missing', `position ${id} is not open`);
  return pos;
}

function withTicks(
  p: Omit<Position, 'tickLower' | 'tickUpper' | 'sqrtLower' | 'sqrtUpper' | 'liquidity'>,
  tickLower: number,
  tickUpper: number,
  liquidity: bigint,
): Position {
  return {
    ...p,
    tickLower,
    tickUpper,
    sqrtLower: getSqrtRatioAtTick(tickLower),
    sqrtUpper: getSqrtRatioAtTick(tickUpper),
    liquidity,
  };
}

function setPosition(d: Draft, pos: Position): void {
  d.positions = { ...d.positions, [pos.id]: pos };
}

/** idle[token0] += delta0, idle[token1] += delta1 (negative = into the position). */
function moveIdle(d: Draft, pos: Position, delta0: bigint, delta1: bigint): void {
  d.idle = adjust(
    adjust(d.idle, pos.token0, delta0, 'insufficient-idle'),
    pos.token1,
    delta1,
    'insufficient-idle',
  );
}
