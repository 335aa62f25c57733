import {
  type RecordType,
  recordTypes,
  SCHEMA_VERSION,
  UNSEQUENCED_SCHEMA_VERSION,
} from '@vault-yield/domain';
import fc from 'fast-check';

/**
 * Valid records of every type for property tests (decode.test.ts, binary.test.ts): hex in mixed
 * case, values at the schema's bounds. Test support only (imports fast-check): not exported by
 * the package.
 */

const hexDigits = (n: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: n, maxLength: n });
const address = hexDigits(40).map((h) => `0x${h}`);
const hash32 = hexDigits(64).map((h) => `0x${h}`);
const uint = fc.oneof(fc.constant('0'), fc.bigInt({ min: 1n, max: 2n ** 256n }).map(String));
const int = fc.bigInt({ min: -(2n ** 200n), max: 2n ** 200n }).map(String);
const decimal = fc
  .tuple(uint, fc.option(fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength: 36 })))
  .map(([i, f]) => (f === null ? i : `${i}.${f}`));
const tick = fc.oneof(fc.integer({ min: -887272, max: 887272 }), fc.constantFrom(-887272, 887272));
const text = (min: number, max: number) => fc.string({ minLength: min, maxLength: max });
const nonneg = fc.oneof(fc.nat(), fc.constantFrom(0, Number.MAX_SAFE_INTEGER));
const tickPair = fc
  .tuple(tick, tick)
  .filter(([a, b]) => a !== b)
  .map(([a, b]): [number, number] => (a < b ? [a, b] : [b, a]));

/**
 * Payloads of the record vocabulary before fee rates and transfers reached the log (the pinned
 * encodings of binary.test.ts are of these); `payloads` adds theirs.
 */
const legacyPayloads: {
  [T in Exclude<
    RecordType,
    'fee.rate.set' | 'transfer.received' | 'position.received' | 'swap'
  >]: fc.Arbitrary<Record<string, unknown>>;
} = {
  'vault.created': fc.record({
    owner: address,
    strategy: text(1, 32),
    token0: address,
    token1: address,
    pool: address,
  }),
  deposit: fc.record({ from: address, token: address, amount: uint }),
  withdrawal: fc.record({ to: address, token: address, amount: uint }),
  'position.opened': fc
    .tuple(
      fc.record({ positionId: uint, pool: address, liquidity: uint, amount0: uint, amount1: uint }),
      tickPair,
    )
    .map(([p, [tickLower, tickUpper]]) => ({ ...p, tickLower, tickUpper })),
  'position.resized': fc.record({
    positionId: uint,
    liquidity: uint,
    amount0Delta: int,
    amount1Delta: int,
  }),
  'position.rebalanced': fc
    .tuple(
      fc.record({
        positionId: uint,
        liquidity: uint,
        amount0Out: uint,
        amount1Out: uint,
        amount0In: uint,
        amount1In: uint,
      }),
      tickPair,
    )
    .map(([p, [tickLower, tickUpper]]) => ({ ...p, tickLower, tickUpper })),
  'position.closed': fc.record({ positionId: uint, amount0: uint, amount1: uint }),
  'fees.collected': fc.record({ positionId: uint, amount0: uint, amount1: uint }),
  'rewards.accrued': fc.record({ rewardToken: address, amount: uint }),
  'rewards.claimed': fc.record({ rewardToken: address, amount: uint }),
  'fee.charged': fc.record({ token: address, amount: uint, recipient: address }),
  suspended: fc.record({ reason: text(1, 500) }),
  resumed: fc.constant({}),
  'exit.requested': fc.constant({}),
  'exit.completed': fc.constant({}),
  'strategy.selected': fc.record({ strategy: text(1, 32) }),
  mark: fc.constant({}),
  revert: fc.record(
    {
      fromBlock: nonneg,
      orphanedBlockHashes: fc.array(hash32, { minLength: 1, maxLength: 3 }),
      fromSeq: fc.integer({ min: 1, max: 2 ** 40 }),
    },
    { requiredKeys: ['fromBlock', 'orphanedBlockHashes'] },
  ),
};

const rate = fc.integer({ min: 0, max: 10_000 });
const payloads: { [T in RecordType]: fc.Arbitrary<Record<string, unknown>> } = {
  ...legacyPayloads,
  'vault.created': fc.oneof(
    legacyPayloads['vault.created'],
    fc
      .tuple(legacyPayloads['vault.created'], rate)
      .map(([p, performanceFeeBps]) => ({ ...p, performanceFeeBps })),
  ),
  'fee.rate.set': fc.record({ performanceFeeBps: rate }),
  'transfer.received': fc.record({ from: address, token: address, amount: uint }),
  'position.received': fc
    .record({ from: address, pool: address, ticks: tickPair, liquidity: uint, amount0: uint, amount1: uint })
    .map(({ ticks: [tickLower, tickUpper], ...p }) => ({ ...p, tickLower, tickUpper })),
  swap: fc.record({ tokenIn: address, amountIn: uint, tokenOut: address, amountOut: uint }),
};

const token = fc.record({
  address,
  symbol: text(1, 32),
  decimals: fc.integer({ min: 0, max: 36 }),
  priceUsd: decimal,
  feed: address,
  priceUpdatedAt: nonneg,
  heartbeat: fc.integer({ min: 1, max: 2 ** 31 }),
});
const amount = fc.record({ token: address, amount: uint });
const holding = fc
  .record({
    id: uint,
    pool: address,
    tickLower: tick,
    tickUpper: tick,
    liquidity: uint,
    owed0: uint,
    owed1: uint,
  })
  .filter((p) => p.tickLower < p.tickUpper);
const pool = fc.record({
  address,
  venue: text(1, 64),
  feeTier: nonneg,
  sqrtPriceX96: uint,
  tick,
  token0: address,
  token1: address,
});

/** Schema 3 with its seq, or schema 2 (unsequenced) without. */
const version = fc.oneof(
  fc.integer({ min: 1, max: 2 ** 40 }).map((seq) => ({ schemaVersion: SCHEMA_VERSION, seq })),
  fc.constant({ schemaVersion: UNSEQUENCED_SCHEMA_VERSION }),
);

/** Valid records of `types`, payloads drawn from `from`. */
const recordsOf = (
  types: readonly RecordType[],
  from: Partial<Record<RecordType, fc.Arbitrary<Record<string, unknown>>>>,
) =>
  fc.constantFrom(...types).chain((type) =>
    fc
      .record({
        v: version,
        chainId: fc.oneof(fc.integer({ min: 1, max: 2 ** 40 }), fc.constant(Number.MAX_SAFE_INTEGER)),
        blockNumber: nonneg,
        blockHash: hash32,
        blockTimestamp: nonneg,
        txHash: hash32,
        txIndex: fc.integer({ min: -1, max: 1000 }),
        logIndex: fc.integer({ min: -1, max: 1000 }),
        vault: address,
        lastInBlock: fc.boolean(),
        context: fc.record({
          tokens: fc.array(token, { minLength: 1, maxLength: 3 }),
          pools: fc.array(pool, { maxLength: 2 }),
          holdings: fc.record({
            balances: fc.array(amount, { maxLength: 3 }),
            positions: fc.array(holding, { maxLength: 2 }),
            pendingRewards: fc.array(amount, { maxLength: 1 }),
          }),
        }),
        type: fc.constant(type),
        payload: from[type]!,
      })
      .map(({ v, ...r }) => ({ ...v, ...r })),
  );

/** Any valid record. */
export const validRecord = recordsOf(recordTypes, payloads);

/** Valid records of the vocabulary before fee rates, transfers and swaps reached the log (pinned encodings). */
export const legacyRecord = recordsOf(
  recordTypes.filter(
    (t) => t !== 'fee.rate.set' && t !== 'transfer.received' && t !== 'position.received' && t !== 'swap',
  ),
  legacyPayloads,
);
