import type { ChainRecord, DecodeLogResult, IndexerLog, WatchedEvent } from '@vault-yield/chain';
import { SCHEMA_VERSION, type ValuationContext, type VaultRecord, ZERO_HASH } from '@vault-yield/domain';
import type { PriceReading, PriceWatch } from '../price-watch.js';
import {
  applyRecordToPositions,
  emptyMarkState,
  type MarkCadence,
  markPublished,
  shouldMark,
  type VaultRegistry,
} from '../vaults.js';
import type { PendingVault } from './types.js';

type Address = `0x${string}`;
type Hash = `0x${string}`;

/**
 * Stands for a record's context between the block walk (which decides what to publish) and the
 * chain reads at its block (valuate.ts), which replace it before anything is published.
 */
export const PENDING_CONTEXT: ValuationContext = Object.freeze({
  tokens: [],
  pools: [],
  holdings: { balances: [], positions: [], pendingRewards: [] },
}) as unknown as ValuationContext;

/** The record of a vault event (context pending, numbered later): what processBlock publishes. */
export function eventRecord(chainId: number, cr: ChainRecord, ts: number): VaultRecord {
  // Written out, not `{ ...cr, more }`: once optimised, V8 (Node 20) gives every object such a
  // spread makes a hidden class of its own (≈ 1.5 µs per added key, and every later read of the
  // record goes megamorphic). Same key order.
  const { blockNumber, blockHash, txHash, txIndex, logIndex, vault, type, payload } = cr;
  return {
    blockNumber,
    blockHash,
    txHash,
    txIndex,
    logIndex,
    vault,
    type,
    payload,
    schemaVersion: SCHEMA_VERSION,
    chainId,
    blockTimestamp: ts,
    lastInBlock: false,
    context: PENDING_CONTEXT,
  } as VaultRecord;
}

/** A vault's mark at a block (context pending, numbered later). */
export function markRecord(
  chainId: number,
  block: number,
  blockHash: Hash,
  ts: number,
  vault: Address,
): VaultRecord {
  return {
    schemaVersion: SCHEMA_VERSION,
    chainId,
    blockNumber: block,
    blockHash,
    blockTimestamp: ts,
    txHash: ZERO_HASH,
    txIndex: -1,
    logIndex: -1,
    vault,
    lastInBlock: true,
    context: PENDING_CONTEXT,
    type: 'mark',
    payload: {},
  };
}

/**
 * The record a Transfer to a vault (`transfer.received`) or a Mint in a vault's pool whose owner is
 * the vault (`position.received`) makes, before the block's records say whether the vault's own
 * event explains it (receivedRecords); undefined for any other log, or one moving nothing.
 */
export function receivedRecord(
  e: WatchedEvent,
  vaultOf: (address: Address) => { pool: Address } | undefined,
): ChainRecord | undefined {
  const { blockNumber, blockHash, txHash, txIndex, logIndex } = e;
  if (e.kind === 'transfer') {
    if (e.value === '0' || !vaultOf(e.to)) return undefined;
    return {
      blockNumber,
      blockHash,
      txHash,
      txIndex,
      logIndex,
      vault: e.to,
      lastInBlock: false,
      type: 'transfer.received',
      payload: { from: e.from, token: e.token, amount: e.value },
    };
  }
  // A Mint in the vault's own pool (the only one it is valued in) with the vault as owner.
  if (e.kind !== 'mint' || e.liquidity === '0' || vaultOf(e.owner)?.pool !== e.pool) return undefined;
  return {
    blockNumber,
    blockHash,
    txHash,
    txIndex,
    logIndex,
    vault: e.owner,
    lastInBlock: false,
    type: 'position.received',
    payload: {
      from: e.sender,
      pool: e.pool,
      tickLower: e.tickLower,
      tickUpper: e.tickUpper,
      liquidity: e.liquidity,
      amount0: e.amount0,
      amount1: e.amount1,
    },
  };
}

/**
 * Joins the block's `transfer.received` and `position.received` records to its event records, in
 * log order: a transfer to a vault, or a Mint whose owner is the vault, in a transaction where that
 * vault emitted an event is the event's own movement (a deposit's transferFrom, a pool's burn or
 * collect, the gauge paying a claim, the vault minting its own position); any other is tokens sent
 * straight to the vault, or liquidity minted for it by someone else, booked by the fold as capital
 * in at this log position. (Tokens sent straight to a vault inside a transaction where it also
 * emitted an event are left to the fold's block-end reconciliation, as every difference no record
 * explains.) A Mint is the vault's own only when the vault called the pool (the Mint's sender,
 * as the vault mints for itself): liquidity minted for it by anyone else is `position.received`
 * even in a transaction where the vault also emitted an event — the chain says the position is
 * the vault's (its pool key's owner), and what it cost is capital in, never a gain.
 */
export function receivedRecords(records: ChainRecord[], transfers: readonly ChainRecord[]): void {
  const explained = new Set<string>();
  for (const r of records) explained.add(`${r.txHash}:${r.vault}`);
  const own = (t: ChainRecord) =>
    explained.has(`${t.txHash}:${t.vault}`) &&
    (t.type !== 'position.received' || (t.payload as { from: string }).from === t.vault);
  let added = false;
  for (const t of transfers)
    if (!own(t)) {
      records.push(t);
      added = true;
    }
  if (added) records.sort((a, b) => a.logIndex - b.logIndex);
}

/** What the block walk reads and moves: the vault registry and the valuation watch. */
export interface BlockWalk {
  chainId: number;
  registry: VaultRegistry;
  watch: PriceWatch;
  cadence: MarkCadence;
  /** Heartbeat (seconds) of a feed: past it, its price is stale. */
  heartbeatOf: (feed: Address) => number;
}

export interface BlockInput {
  block: number;
  blockHash: Hash;
  /** Block time, Unix seconds. */
  ts: number;
  logs: readonly IndexerLog[];
  decoded: ReadonlyMap<IndexerLog, DecodeLogResult>;
  /** Vaults the segment's factory logs create, registered at their VaultCreated. */
  pendingVaults: ReadonlyMap<Address, PendingVault>;
  /** State read at this block (end of block), applied after its events. */
  snapshots: readonly PriceReading[];
}

export interface BlockOutput {
  /** The block's records in log order, then its marks in vault order (contexts pending). */
  records: VaultRecord[];
  /** Vaults with a record (or mark) in this block. */
  touched: Set<Address>;
  /** Vaults whose mark state changed (saved with the checkpoint). */
  changed: Set<Address>;
}

/**
 * One block: valuation state (pool prices, feed answers) from its Swap / AnswerUpdated logs and snapshots, the vault records
 * its logs make, then marks for the vaults that fell due (a range flip, or a price or pool move
 * within the cadence). Moves the registry's mark states and the watch; reads nothing.
 */
export function processBlock(walk: BlockWalk, input: BlockInput): BlockOutput {
  const { registry, watch } = walk;
  const { block: b, ts } = input;
  const chainRecords: ChainRecord[] = [];
  const changedPools = new Set<Address>();
  const changedTokens = new Set<Address>();
  /**
   * Transfers of tokens to a vault and Mints for it, until the block's records say which its own
   * events explain.
   */
  const transfers: ChainRecord[] = [];
  /** Vaults tokens left in this block (a Transfer from the vault): marked below unless touched. */
  const sent = new Set<Address>();
  for (const l of input.logs) {
    const r = input.decoded.get(l);
    if (!r?.ok) continue;
    if (r.kind === 'record') {
      if (r.record.type === 'vault.created') {
        const p = input.pendingVaults.get(r.record.vault);
        if (!p || registry.get(p.vault)) continue;
        registry.add({ ...p, state: emptyMarkState() });
      }
      chainRecords.push(r.record);
    } else if (r.event.kind === 'swap') {
      // Every swap accrues trading fees to the liquidity in range, whether or not the price
      // moved visibly: the pool's vaults fall due for a mark (within the cadence), so their
      // uncollected fees never go unrecorded for longer than the cadence.
      watch.applySwap(r.event.pool, b, r.event.sqrtPriceX96, r.event.tick);
      if (watch.hasPool(r.event.pool)) changedPools.add(r.event.pool);
    } else if (r.event.kind === 'transfer' || r.event.kind === 'mint') {
      const received = receivedRecord(r.event, (vault) => registry.get(vault));
      if (received) transfers.push(received);
      if (r.event.kind === 'transfer' && r.event.value !== '0' && registry.get(r.event.from))
        sent.add(r.event.from);
    } else if (r.event.kind === 'answer') {
      for (const t of watch.applyAnswer(r.event.feed, b, BigInt(r.event.answer), r.event.updatedAt))
        changedTokens.add(t);
    }
  }
  if (transfers.length > 0) receivedRecords(chainRecords, transfers);
  for (const s of input.snapshots) {
    if (s.kind === 'token' && watch.hasToken(s.info.address)) changedTokens.add(s.info.address);
    if (s.kind === 'pool' && watch.hasPool(s.pool.address)) changedPools.add(s.pool.address);
    watch.applyReading(s);
  }

  const records: VaultRecord[] = [];
  const touched = new Set<Address>();
  const changed = new Set<Address>();
  for (const cr of chainRecords) {
    const v = registry.get(cr.vault)!;
    const record = eventRecord(walk.chainId, cr, ts);
    applyRecordToPositions(v.state, record);
    records.push(record);
    touched.add(v.vault);
  }
  for (const vault of touched) {
    const v = registry.get(vault)!;
    markPublished(v.state, b, ts, watch.poolTick(v.pool));
    registry.setDirty(v, false);
    changed.add(vault);
  }
  const affect = (vault: Address) => {
    const v = registry.get(vault);
    if (!v || touched.has(vault) || v.state.dirty) return;
    registry.setDirty(v, true);
    changed.add(vault);
  };
  for (const p of changedPools) for (const v of registry.onPool(p)) affect(v);
  for (const t of changedTokens) for (const v of registry.onToken(t)) affect(v);

  // Marks, in vault order so a replay emits the same bytes.
  const marks = new Set<Address>();
  for (const vault of registry.dirty) {
    const v = registry.get(vault)!;
    if (v.createdBlock > b) continue;
    if (shouldMark(v.state, b, ts, watch.poolTick(v.pool), walk.cadence)) marks.add(vault);
  }
  // A feed that passed its heartbeat since a vault's last record: the vault is marked at once,
  // so its snapshot names the stale price from the first block it is stale in.
  for (const f of watch.feedAges()) {
    const staleAt = f.updatedAt + walk.heartbeatOf(f.feed);
    if (ts <= staleAt) continue;
    for (const vault of registry.onToken(f.token)) {
      const v = registry.get(vault)!;
      if (touched.has(vault) || v.createdBlock > b) continue;
      if (v.state.lastTs !== null && v.state.lastTs <= staleAt) marks.add(vault);
    }
  }
  // Tokens that left a vault (a Transfer whose sender is the vault) are valued at their own block:
  // a vault's records of a block carry its end-of-block holdings and the last one reconciles the
  // book with them. A vault with a record here needs nothing more — a Transfer out its own event
  // explains (a withdrawal, a fee payment, the pool taking a mint's or a swap's tokens) is in its
  // book already, so it books no drain; one no event explains is the shortfall found at this
  // block's end. A vault with no record here is marked at once, whatever the cadence (as a range
  // flip is): the mark reads the balances at this block and the fold books the shortfall as a
  // loss (`drain` names this block), not at the vault's next record. No record type of its own:
  // the chain's balances are the truth, the Transfer only says when to read them.
  for (const vault of sent) {
    const v = registry.get(vault)!;
    if (!touched.has(vault) && v.createdBlock <= b) marks.add(vault);
  }
  for (const vault of [...marks].sort()) {
    const v = registry.get(vault)!;
    records.push(markRecord(walk.chainId, b, input.blockHash, ts, vault));
    markPublished(v.state, b, ts, watch.poolTick(v.pool));
    registry.setDirty(v, false);
    changed.add(vault);
    touched.add(vault);
  }
  return { records, touched, changed };
}
