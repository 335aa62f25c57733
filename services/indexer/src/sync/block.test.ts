import type { DecodeLogResult, IndexerLog } from '@vault-yield/chain';
import { describe, expect, it } from 'vitest';
import { PriceWatch } from '../price-watch.js';
import { emptyMarkState, VaultRegistry } from '../vaults.js';
import { type BlockWalk, processBlock } from './block.js';

type Address = `0x${string}`;
const a = (n: number) => `0x${n.toString(16).padStart(40, '0')}` as Address;
const VAULT = a(0x1001);
const OTHER_VAULT = a(0x1002);
const T0 = a(0xa1);
const T1 = a(0xa2);
const RWD = a(0xa3);
const POOL = a(0xb0);
const FEED = a(0xf0);
const HASH = `0x${'ab'.repeat(32)}` as const;

function walk(cadenceBlocks = 10): BlockWalk {
  const watch = new PriceWatch();
  for (const t of [T0, T1, RWD]) {
    watch.applyReading({
      kind: 'token',
      block: 1,
      info: { address: t, symbol: 'T', decimals: 18 },
      feed: { token: t, feed: FEED, feedDecimals: 8, answer: 100n, updatedAt: 1_000 },
    });
  }
  watch.applyReading({
    kind: 'pool',
    block: 1,
    pool: {
      address: POOL,
      venue: 'uniswap-v3',
      feeTier: 500,
      sqrtPriceX96: '79228162514264337593543950336',
      tick: 0,
      token0: T0,
      token1: T1,
    },
  });
  const registry = new VaultRegistry();
  for (const vault of [VAULT, OTHER_VAULT]) {
    const state = emptyMarkState();
    state.lastBlock = 5;
    state.lastTs = 1_010;
    registry.add({ vault, createdBlock: 2, token0: T0, token1: T1, rewardToken: RWD, pool: POOL, state });
  }
  return {
    chainId: 31337,
    registry,
    watch,
    cadence: { intervalBlocks: cadenceBlocks, minIntervalMs: 0 },
    heartbeatOf: () => 3600,
  };
}

let logIndex = 0;
function log(event: DecodeLogResult): { log: IndexerLog; decoded: DecodeLogResult } {
  return { log: { logIndex: logIndex++ } as unknown as IndexerLog, decoded: event };
}
const pos = (block: number) => ({
  blockNumber: block,
  blockHash: HASH,
  txHash: HASH,
  txIndex: 0,
  logIndex: 0,
});

function run(w: BlockWalk, block: number, ts: number, events: DecodeLogResult[]) {
  const entries = events.map(log);
  return processBlock(w, {
    block,
    blockHash: HASH,
    ts,
    logs: entries.map((e) => e.log),
    decoded: new Map(entries.map((e) => [e.log, e.decoded])),
    pendingVaults: new Map(),
    snapshots: [],
  });
}

describe('processBlock: when vaults fall due for a record', () => {
  it('tokens sent straight to a vault get a transfer.received record at the transfer’s log position, whatever the cadence', () => {
    const w = walk(1000);
    const transfer: DecodeLogResult = {
      ok: true,
      kind: 'watched',
      event: { ...pos(6), kind: 'transfer', token: T1, from: a(0x99), to: VAULT, value: '5000000' },
    } as DecodeLogResult;
    const out = run(w, 6, 1_020, [transfer]);
    expect(out.records.map((r) => [r.type, r.vault, r.payload])).toEqual([
      ['transfer.received', VAULT, { from: a(0x99), token: T1, amount: '5000000' }],
    ]);
    expect(out.touched).toEqual(new Set([VAULT]));
    // a transfer between addresses that are no vaults marks nothing
    const stray: DecodeLogResult = {
      ok: true,
      kind: 'watched',
      event: { ...pos(7), kind: 'transfer', token: T1, from: a(0x98), to: a(0x99), value: '1' },
    } as DecodeLogResult;
    expect(run(w, 7, 1_030, [stray]).records).toEqual([]);
  });

  it('tokens leaving a vault with no event of its own in the block mark it there, whatever the cadence; its own events’ transfers add nothing', () => {
    const w = walk(1000);
    const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as const;
    const at = (block: number, logIndex: number, txHash: `0x${string}`) => ({
      ...pos(block),
      txHash,
      logIndex,
    });
    const valuation = (event: object) => ({ ok: true, kind: 'watched', event }) as DecodeLogResult;
    const out = (from: Address, to: Address, value: string, block: number, logIndex: number, txh = tx(1)) =>
      valuation({ ...at(block, logIndex, txh), kind: 'transfer', token: T0, from, to, value });
    // a drain (an abused approval): the vault's tokens leave with no vault event; the cadence
    // (1000 blocks, last record at 5) would allow no mark
    const drained = run(w, 6, 1_020, [out(VAULT, a(0x99), '7', 6, 0)]);
    expect(drained.records.map((r) => [r.type, r.vault, r.blockNumber, r.lastInBlock])).toEqual([
      ['mark', VAULT, 6, true],
    ]);
    expect(w.registry.get(VAULT)!.state.lastBlock).toBe(6);
    // nothing moved: nothing to mark
    expect(run(w, 7, 1_030, [out(VAULT, a(0x99), '0', 7, 0)]).records).toEqual([]);
    // a withdrawal (the vault's event and its transfer out, one transaction): the event's record
    // alone, no mark (its holdings are the block's end already)
    const withdrawal = {
      ok: true,
      kind: 'record',
      record: {
        ...at(8, 1, tx(2)),
        vault: VAULT,
        lastInBlock: false,
        type: 'withdrawal',
        payload: { to: a(0x77), token: T0, amount: '9' },
      },
    } as DecodeLogResult;
    const withdrawn = run(w, 8, 1_040, [out(VAULT, a(0x77), '9', 8, 0, tx(2)), withdrawal]);
    expect(withdrawn.records.map((r) => [r.type, r.vault])).toEqual([['withdrawal', VAULT]]);
    // from one vault to the other: the sender is marked, the recipient has its transfer.received
    const between = run(w, 9, 1_050, [out(VAULT, OTHER_VAULT, '5', 9, 0, tx(3))]);
    expect(between.records.map((r) => [r.type, r.vault])).toEqual([
      ['transfer.received', OTHER_VAULT],
      ['mark', VAULT],
    ]);
  });

  it('a transfer its vault’s own event explains (same transaction) makes no record; the others keep log order', () => {
    const w = walk(1000);
    const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as const;
    const at = (logIndex: number, txHash: `0x${string}`) => ({ ...pos(8), txHash, logIndex });
    const valuation = (event: object) => ({ ok: true, kind: 'watched', event }) as DecodeLogResult;
    // tx 1: the owner's deposit (transferFrom then Deposited); tx 2: a plain transfer; tx 3: to the other vault.
    const deposit = {
      ok: true,
      kind: 'record',
      record: {
        ...at(1, tx(1)),
        vault: VAULT,
        lastInBlock: false,
        type: 'deposit',
        payload: { from: a(0x77), token: T1, amount: '9' },
      },
    } as DecodeLogResult;
    const out = run(w, 8, 1_040, [
      valuation({ ...at(0, tx(1)), kind: 'transfer', token: T1, from: a(0x77), to: VAULT, value: '9' }),
      deposit,
      valuation({ ...at(2, tx(2)), kind: 'transfer', token: T0, from: a(0x99), to: VAULT, value: '3' }),
      valuation({ ...at(3, tx(1)), kind: 'transfer', token: T0, from: a(0x99), to: OTHER_VAULT, value: '4' }),
      valuation({ ...at(4, tx(2)), kind: 'transfer', token: T0, from: a(0x99), to: VAULT, value: '0' }),
    ]);
    expect(out.records.map((r) => [r.type, r.vault, r.logIndex])).toEqual([
      ['deposit', VAULT, 1],
      ['transfer.received', VAULT, 2],
      ['transfer.received', OTHER_VAULT, 3],
    ]);
  });

  it('liquidity minted for a vault by someone else gets a position.received record at the Mint’s log position; its range is read from then on', () => {
    const w = walk(1000);
    const tx = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as const;
    const at = (logIndex: number, txHash: `0x${string}`) => ({ ...pos(9), txHash, logIndex });
    const valuation = (event: object) => ({ ok: true, kind: 'watched', event }) as DecodeLogResult;
    const mint = (
      logIndex: number,
      txHash: `0x${string}`,
      owner: Address,
      pool: Address,
      ticks: [number, number],
      sender: Address = a(0x99),
    ) =>
      valuation({
        ...at(logIndex, txHash),
        kind: 'mint',
        pool,
        sender,
        owner,
        tickLower: ticks[0],
        tickUpper: ticks[1],
        liquidity: '1000',
        amount0: '10',
        amount1: '20',
      });
    // tx 1: the vault opens its own position (the pool's Mint, then PositionOpened): explained.
    const opened = {
      ok: true,
      kind: 'record',
      record: {
        ...at(1, tx(1)),
        vault: VAULT,
        lastInBlock: false,
        type: 'position.opened',
        payload: {
          positionId: '1',
          pool: POOL,
          tickLower: -60,
          tickUpper: 60,
          liquidity: '1000',
          amount0: '10',
          amount1: '20',
        },
      },
    } as DecodeLogResult;
    const out = run(w, 9, 1_050, [
      mint(0, tx(1), VAULT, POOL, [-60, 60], VAULT),
      opened,
      // tx 2: someone mints for the vault (a gift), and for an address that is no vault
      mint(2, tx(2), VAULT, POOL, [-120, 120]),
      mint(3, tx(2), a(0x99), POOL, [-120, 120]),
      // tx 3: a Mint with the vault as owner in another pool: not the vault's pool, not valued
      mint(4, tx(3), VAULT, a(0xb1), [-120, 120]),
    ]);
    expect(out.records.map((r) => [r.type, r.vault, r.logIndex])).toEqual([
      ['position.opened', VAULT, 1],
      ['position.received', VAULT, 2],
    ]);
    expect(out.records[1]!.payload).toEqual({
      from: a(0x99),
      pool: POOL,
      tickLower: -120,
      tickUpper: 120,
      liquidity: '1000',
      amount0: '10',
      amount1: '20',
    });
    const state = w.registry.get(VAULT)!.state;
    expect(state.received).toEqual([[-120, 120]]);
    // its range flips count for marks like an own position's
    expect(Object.values(state.positions)).toContainEqual([-120, 120]);
    // the same range again adds no second read
    run(w, 10, 1_060, [mint(0, tx(4), VAULT, POOL, [-120, 120])]);
    expect(w.registry.get(VAULT)!.state.received).toEqual([[-120, 120]]);
  });

  it('liquidity minted for a vault by someone else in a transaction where the vault emits an event is position.received, not the vault’s own', () => {
    const w = walk(1000);
    const txh = `0x${'5'.padStart(64, '0')}` as const;
    const at = (logIndex: number) => ({ ...pos(9), txHash: txh, logIndex });
    const mint = (logIndex: number, owner: Address, sender: Address, ticks: [number, number]) =>
      ({
        ok: true,
        kind: 'watched',
        event: {
          ...at(logIndex),
          kind: 'mint',
          pool: POOL,
          sender,
          owner,
          tickLower: ticks[0],
          tickUpper: ticks[1],
          liquidity: '500',
          amount0: '7',
          amount1: '9',
        },
      }) as DecodeLogResult;
    // One transaction (a helper contract): the vault's own event, then a third party mints for
    // the vault (one range new, one the vault's live range) and for itself.
    const selected = {
      ok: true,
      kind: 'record',
      record: {
        ...at(0),
        vault: VAULT,
        lastInBlock: false,
        type: 'strategy.selected',
        payload: { strategy: 'other' },
      },
    } as DecodeLogResult;
    const out = run(w, 9, 1_050, [
      selected,
      mint(1, VAULT, a(0x77), [-240, 240]),
      mint(2, a(0x77), a(0x77), [-240, 240]),
      mint(3, VAULT, a(0x77), [-60, 60]),
    ]);
    expect(out.records.map((r) => [r.type, r.vault, r.logIndex])).toEqual([
      ['strategy.selected', VAULT, 0],
      ['position.received', VAULT, 1],
      ['position.received', VAULT, 3],
    ]);
    expect(out.records.every((r) => r.type !== 'position.received' || r.payload.from === a(0x77))).toBe(true);
    expect(w.registry.get(VAULT)!.state.received).toEqual([
      [-240, 240],
      [-60, 60],
    ]);
  });

  it('every swap in the pool makes its vaults due (fees accrue), even when slot0 did not move', () => {
    const w = walk(0);
    const swap: DecodeLogResult = {
      ok: true,
      kind: 'watched',
      event: {
        ...pos(6),
        kind: 'swap',
        pool: POOL,
        sqrtPriceX96: '79228162514264337593543950336',
        tick: 0,
        liquidity: '1',
      },
    } as DecodeLogResult;
    const out = run(w, 6, 1_020, [swap]);
    expect(out.records.map((r) => r.vault).sort()).toEqual([VAULT, OTHER_VAULT].sort());
  });

  it('a feed past its heartbeat marks every vault priced by it once, from the first stale block', () => {
    const w = walk(1000);
    // fresh: updatedAt 1000 + heartbeat 3600 = 4600
    expect(run(w, 6, 4_600, []).records).toEqual([]);
    const first = run(w, 7, 4_601, []);
    expect(first.records.map((r) => r.vault).sort()).toEqual([VAULT, OTHER_VAULT].sort());
    expect(first.records.every((r) => r.type === 'mark')).toBe(true);
    expect(run(w, 8, 4_700, []).records).toEqual([]);
  });
});
