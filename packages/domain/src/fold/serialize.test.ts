import { ARB, eth, History, POOL, TICK_2000, WETH } from '@vault-yield/test-kit/domain';
import { describe, expect, it } from 'vitest';
import { getLiquidityForAmount0 } from '../math/liquidity-amounts.js';
import { getSqrtRatioAtTick } from '../math/tick-math.js';
import { createVaultState, evolve } from './evolve.js';
import { deserializeState, serializeState } from './serialize.js';

function richState() {
  const h = new History();
  let s = createVaultState(h.created());
  s = evolve(s, h.deposit(WETH, eth(2)));
  const [lo, hi] = [TICK_2000 - 600, TICK_2000 + 600];
  const l = getLiquidityForAmount0(getSqrtRatioAtTick(lo), getSqrtRatioAtTick(hi), eth(0.1));
  s = evolve(
    s,
    h.record('position.opened', {
      positionId: '42',
      pool: POOL,
      tickLower: lo,
      tickUpper: hi,
      liquidity: l.toString(),
      amount0: eth(0.1).toString(),
      amount1: '0',
    }),
  );
  s = evolve(s, h.record('rewards.accrued', { rewardToken: ARB, amount: '12345' }));
  s = evolve(s, h.withdrawal(WETH, eth(0.3), { weth: '2101.123456789012345678901' }));
  s = evolve(s, h.record('suspended', { reason: 'oracle stale' }));
  return { h, s };
}

describe('state serialisation (jsonb)', () => {
  it('round-trips through JSON exactly', () => {
    const { s } = richState();
    const json = JSON.parse(JSON.stringify(serializeState(s)));
    expect(deserializeState(json)).toEqual(s);
  });

  it('a deserialised state folds on exactly like the original', () => {
    const { h, s } = richState();
    const copy = deserializeState(JSON.parse(JSON.stringify(serializeState(s))));
    const r = h.mark({ weth: '1999.5', tick: TICK_2000 + 700 });
    expect(evolve(copy, r)).toEqual(evolve(s, r));
  });

  it('a state inside a block keeps its block start, and folds on to the same block end', () => {
    const { h, s } = richState();
    const a = h.deposit(WETH, eth(1));
    const b = h.mark();
    // Two records of one block: the first carries the block's end context and is not its last.
    const first = {
      ...a,
      blockNumber: b.blockNumber,
      blockHash: b.blockHash,
      context: b.context,
      lastInBlock: false,
    };
    const mid = evolve(s, first);
    expect(mid.blockStart?.end).toBe(s);
    const json = JSON.parse(JSON.stringify(serializeState(mid)));
    // The previous block end is written whole (it is what the snapshot serves until the block ends).
    const { v: _v, ...endFields } = JSON.parse(JSON.stringify(serializeState(s)));
    expect(json.blockStart).toEqual({
      end: endFields,
      flows: [{ kind: 'in', token: WETH, raw: eth(1).toString(), rateBps: 2000 }],
    });
    const copy = deserializeState(json);
    expect(copy).toEqual(mid);
    const last = { ...b, logIndex: 1 };
    expect(evolve(copy, last)).toEqual(evolve(mid, last));
    // At a block end there is no block start: the document is as before this field existed.
    expect('blockStart' in serializeState(evolve(mid, last))).toBe(false);
    // Fold version 2 wrote the block start's figures only: still read, and folded on exactly.
    const legacy = {
      ...json,
      blockStart: {
        valueUsd: s.valueUsd.toString(),
        capitalInUsd: s.capitalInUsd.toString(),
        capitalOutUsd: s.capitalOutUsd.toString(),
        strategy: s.strategy,
        highWaterUsd: s.highWaterUsd.toString(),
        benchmark: Object.fromEntries(Object.entries(s.benchmark).map(([t, h]) => [t, h.toString()])),
        flows: [{ kind: 'in', token: WETH, raw: eth(1).toString(), rateBps: 2000 }],
      },
    };
    const old = evolve(deserializeState(legacy), last);
    const now = evolve(mid, last);
    for (const k of ['valueUsd', 'capitalInUsd', 'highWaterUsd', 'benchmark', 'returnIndex'] as const)
      expect(old[k]).toEqual(now[k]);
  });

  it('rejects malformed documents', () => {
    const { s } = richState();
    const json = serializeState(s);
    expect(() => deserializeState({ ...json, v: 1 })).toThrow();
    expect(() => deserializeState({ ...json, idle: { [WETH]: '-1' } })).toThrow();
    expect(() => deserializeState({ ...json, valueUsd: 1.5 })).toThrow();
    expect(() => deserializeState(null)).toThrow();
    expect(() => deserializeState({ ...json, blockStart: { valueUsd: '1', capitalInUsd: '0' } })).toThrow();
  });
});
