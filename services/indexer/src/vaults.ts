import type { VaultRecord } from '@vault-yield/domain';
import type { StoredIndexerVault } from '@vault-yield/store';
import type { ValuedSet } from './price-watch.js';

type Address = `0x${string}`;

/**
 * What the indexer remembers per vault between blocks (saved with the checkpoint as JSON): the
 * open position ranges, whether each was in range in the vault's last published context, and
 * when that context was published. Marks are decided from it alone, so a restart from the
 * checkpoint decides exactly as the run that crashed.
 */
export interface VaultMarkState {
  /** positionId → [tickLower, tickUpper] of open positions. */
  positions: Record<string, [number, number]>;
  /** positionId → in range at the vault's last published record. */
  flags: Record<string, boolean>;
  /** Block and block time (s) of the vault's last published record; null = none yet / reset. */
  lastBlock: number | null;
  lastTs: number | null;
  /** Prices or the pool moved since the last published record. */
  dirty: boolean;
  /**
   * The vault's next record sequence number (envelope `seq`); saved with the checkpoint, so a
   * restart numbers republished records as before. Absent in states saved before schema 3: 1.
   */
  nextSeq?: number;
  /**
   * Ranges [tickLower, tickUpper] of the vault's pool where liquidity was minted for it by someone
   * else (`position.received`), in the order first seen: the valuation reads them at every block
   * (ValuedVault.ranges). Only ever grows — a range the pool no longer holds anything for reads
   * as nothing, and one seen on a block a reorg orphaned reads as nothing on the new chain.
   */
  received?: [number, number][];
}

export interface VaultEntry extends ValuedSet {
  vault: Address;
  createdBlock: number;
  state: VaultMarkState;
}

export interface MarkCadence {
  /** At most one mark per vault per this many blocks (flips excepted). */
  intervalBlocks: number;
  /** … and per this much block time (ms), flips excepted. */
  minIntervalMs: number;
}

export function emptyMarkState(): VaultMarkState {
  return { positions: {}, flags: {}, lastBlock: null, lastTs: null, dirty: false, nextSeq: 1 };
}

/**
 * A deep copy of a mark state (what is saved with a checkpoint while the live state moves on);
 * the same value as structuredClone, several times cheaper on the indexer's per-batch path.
 */
export function copyMarkState(s: VaultMarkState): VaultMarkState {
  const positions: Record<string, [number, number]> = {};
  for (const [id, [lo, hi]] of Object.entries(s.positions)) positions[id] = [lo, hi];
  return {
    positions,
    flags: { ...s.flags },
    lastBlock: s.lastBlock,
    lastTs: s.lastTs,
    dirty: s.dirty,
    nextSeq: s.nextSeq ?? 1,
    ...(s.received ? { received: s.received.map(([lo, up]): [number, number] => [lo, up]) } : {}),
  };
}

/** A copy of the vault for saving (its live state keeps moving while the batch publishes). */
export function storedVault(v: VaultEntry): StoredIndexerVault {
  return {
    vault: v.vault,
    createdBlock: v.createdBlock,
    token0: v.token0,
    token1: v.token1,
    pool: v.pool,
    rewardToken: v.rewardToken,
    state: copyMarkState(v.state),
  };
}

/** Range flags of the open positions at a pool tick (the pool's rule: lower ≤ tick < upper). */
export function rangeFlags(
  positions: Record<string, [number, number]>,
  tick: number | undefined,
): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const [id, [lo, hi]] of Object.entries(positions))
    out[id] = tick !== undefined && lo <= tick && tick < hi;
  return out;
}

/** True when some open position's flag differs from the flag last published. */
export function flipped(state: VaultMarkState, tick: number | undefined): boolean {
  const now = rangeFlags(state.positions, tick);
  for (const [id, f] of Object.entries(now)) {
    const before = state.flags[id];
    if (before !== undefined && before !== f) return true;
  }
  return false;
}

/**
 * Whether a vault with no record in block (`block`, `ts`) gets a mark there: always when a range
 * flag flipped; otherwise when prices moved since its last record and the cadence allows.
 */
export function shouldMark(
  state: VaultMarkState,
  block: number,
  ts: number,
  tick: number | undefined,
  cadence: MarkCadence,
): boolean {
  if (flipped(state, tick)) return true;
  if (!state.dirty) return false;
  if (state.lastBlock !== null && block - state.lastBlock < cadence.intervalBlocks) return false;
  if (state.lastTs !== null && (ts - state.lastTs) * 1000 < cadence.minIntervalMs) return false;
  return true;
}

/** Applies a vault record's effect on position ranges (other records leave them alone). */
export function applyRecordToPositions(
  state: VaultMarkState,
  r: Pick<VaultRecord, 'type' | 'payload'>,
): void {
  switch (r.type) {
    case 'position.opened': {
      const p = r.payload as { positionId: string; tickLower: number; tickUpper: number };
      state.positions[p.positionId] = [p.tickLower, p.tickUpper];
      break;
    }
    case 'position.rebalanced': {
      const p = r.payload as { positionId: string; tickLower: number; tickUpper: number };
      state.positions[p.positionId] = [p.tickLower, p.tickUpper];
      break;
    }
    case 'position.closed': {
      const p = r.payload as { positionId: string };
      delete state.positions[p.positionId];
      delete state.flags[p.positionId];
      break;
    }
    case 'position.received': {
      // The vault cannot burn it (its code burns only what it minted): it stays, its range flips
      // count like an own position's, and the valuation reads it from now on.
      const p = r.payload as { tickLower: number; tickUpper: number };
      const id = `received:${p.tickLower}:${p.tickUpper}`;
      if (!(id in state.positions)) {
        state.positions[id] = [p.tickLower, p.tickUpper];
        state.received = [...(state.received ?? []), [p.tickLower, p.tickUpper]];
      }
      break;
    }
    default:
  }
}

/** After a record (of any type, marks included) went out for the vault at this block. */
export function markPublished(
  state: VaultMarkState,
  block: number,
  ts: number,
  tick: number | undefined,
): void {
  state.flags = rangeFlags(state.positions, tick);
  state.lastBlock = block;
  state.lastTs = ts;
  state.dirty = false;
}

/** The vaults the indexer knows, indexed by the pool and tokens they are valued with. */
export class VaultRegistry {
  readonly byAddress = new Map<Address, VaultEntry>();
  private readonly byPool = new Map<Address, Set<Address>>();
  private readonly byToken = new Map<Address, Set<Address>>();
  /** Vaults with dirty = true (waiting for the cadence to allow a mark). */
  readonly dirty = new Set<Address>();

  add(v: VaultEntry): void {
    this.byAddress.set(v.vault, v);
    const idx = (m: Map<Address, Set<Address>>, k: Address) => {
      const s = m.get(k) ?? new Set<Address>();
      m.set(k, s);
      s.add(v.vault);
    };
    idx(this.byPool, v.pool);
    for (const t of [v.token0, v.token1, v.rewardToken]) idx(this.byToken, t);
    if (v.state.dirty) this.dirty.add(v.vault);
  }

  remove(vault: Address): void {
    const v = this.byAddress.get(vault);
    if (!v) return;
    this.byAddress.delete(vault);
    this.byPool.get(v.pool)?.delete(vault);
    for (const t of [v.token0, v.token1, v.rewardToken]) this.byToken.get(t)?.delete(vault);
    this.dirty.delete(vault);
  }

  get(vault: Address): VaultEntry | undefined {
    return this.byAddress.get(vault);
  }

  onPool(pool: Address): Iterable<Address> {
    return this.byPool.get(pool) ?? [];
  }

  onToken(token: Address): Iterable<Address> {
    return this.byToken.get(token) ?? [];
  }

  get size(): number {
    return this.byAddress.size;
  }

  all(): IterableIterator<VaultEntry> {
    return this.byAddress.values();
  }

  setDirty(v: VaultEntry, dirty: boolean): void {
    v.state.dirty = dirty;
    if (dirty) this.dirty.add(v.vault);
    else this.dirty.delete(v.vault);
  }
}
