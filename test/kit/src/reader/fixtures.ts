import { randomBytes } from 'node:crypto';
import {
  ledgerPayloadSchemas,
  type PositionView,
  payloadSchemas,
  RECONCILED,
  RECONCILED_LOG_INDEX,
  RECONCILED_TX_INDEX,
  type RecordType,
  SCHEMA_VERSION,
  type SnapshotView,
  snapshotView,
  vaultId,
  vaultRecord,
} from '@vault-yield/domain';
import { hexToBytes } from '@vault-yield/store';
import pg from 'pg';

/**
 * Consistent projection rows written with the writer role, for reader tests while the projector
 * is built in parallel. Snapshots obey the seed rules (netUsd identity, strategy + market = net,
 * suspension ⇒ exitsAvailable, status matches ranges, ranges in price space) and parse with
 * snapshotView; ledger payloads parse with the record schemas.
 */

export const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;
export const randomAddress = () => hex(20);
export const randomHash = () => hex(32);

export type Writer = pg.Pool;

export function writer(url: string, schema: string): Writer {
  const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 4 });
  // A client closing while the test database is dropped (with force) must not crash the run.
  pool.on('error', () => {});
  return pool;
}

/** Micro-dollar integers → 6-dp numbers, as the fold's mapping does. */
const usd = (micros: number) => micros / 1e6;

/** The chain fixtures are on unless told (the local devnet's). */
export const TEST_CHAIN = 31337;

export interface SnapshotSpec {
  /** The vault's chain (default TEST_CHAIN). */
  chainId?: number;
  vault?: string;
  owner?: string;
  strategy?: string;
  status?: SnapshotView['status'];
  /** Micro-dollars. */
  valueMicros?: number;
  capitalInMicros?: number;
  capitalOutMicros?: number;
  marketMicros?: number;
  updatedAt?: number;
  blockNumber?: number;
  suspensionReason?: string;
  recordsApplied?: number;
}

function position(id: string, inRange: boolean): PositionView {
  const lower = 1800.5;
  const upper = 2200.25;
  return {
    id,
    pool: { a: 'WETH', b: 'USDC', venue: 'uniswap-v3', feeTier: 3000 },
    range: { lower, upper, current: inRange ? 2012.123456 : 2450.5 },
    inRange,
    pendingRewardsUsd: 1.25,
    uncollectedFeesUsd: 0.5,
  };
}

/** A snapshot satisfying every seed rule; `spec` fixes any part of it. */
export function makeSnapshot(spec: SnapshotSpec = {}): SnapshotView {
  const status = spec.status ?? 'earning';
  const idle = status === 'idle';
  const value = spec.valueMicros ?? (idle ? 0 : 10_500_123_456);
  const capitalIn = spec.capitalInMicros ?? (idle ? 0 : 10_000_000_000);
  const capitalOut = spec.capitalOutMicros ?? 0;
  const net = value + capitalOut - capitalIn;
  const market = spec.marketMicros ?? 321_654_321;
  const updatedAt = spec.updatedAt ?? 1_735_689_600_000;
  const positions =
    status === 'earning'
      ? [position('101', true), position('102', true)]
      : status === 'attention'
        ? [position('201', true), position('202', false)]
        : status === 'suspended'
          ? [position('301', true)]
          : [];
  const chainId = spec.chainId ?? TEST_CHAIN;
  const vault = (spec.vault ?? randomAddress()).toLowerCase();
  const snap: SnapshotView = {
    id: vaultId(chainId, vault),
    chainId,
    vault,
    owner: (spec.owner ?? randomAddress()).toLowerCase(),
    status,
    strategy: spec.strategy ?? 'steady-eth',
    blockNumber: spec.blockNumber ?? 1_000,
    valueUsd: usd(value),
    capitalInUsd: usd(capitalIn),
    capitalOutUsd: usd(capitalOut),
    netUsd: usd(net),
    strategyDeltaUsd: usd(net - market),
    marketDeltaUsd: usd(market),
    positions,
    fees: {
      contributedUsd: usd(capitalIn),
      withdrawnUsd: usd(capitalOut),
      taxedUsd: 12.5,
      highWaterUsd: usd(capitalIn),
    },
    suspension:
      status === 'suspended'
        ? {
            reason: spec.suspensionReason ?? 'oracle deviation',
            exitsAvailable: true,
            since: updatedAt - 60_000,
          }
        : null,
    updatedAt,
    pendingRewardsUsd: positions.length * 1.25,
    uncollectedFeesUsd: positions.length * 0.5,
    stalePrices: [],
  };
  // Identity first, as the fold writes it (kept if the view did not list them).
  const { id: _id, chainId: _chainId, ...rest } = snapshotView.parse(snap);
  return { id: snap.id, chainId, ...rest };
}

/**
 * Inserts (or replaces) vault_snapshot and positions rows for each snapshot, on the snapshot's
 * chain (`opts.chainId` overrides it).
 */
export async function insertSnapshots(
  db: Writer,
  snaps: readonly SnapshotView[],
  opts: { chainId?: number; recordsApplied?: number; lastRecordId?: string } = {},
): Promise<void> {
  if (snaps.length === 0) return;
  const chainOf = (s: SnapshotView) => opts.chainId ?? (s as { chainId?: number }).chainId ?? TEST_CHAIN;
  const rows = snaps.map((s) => ({
    vault: s.vault,
    chain_id: chainOf(s),
    owner: s.owner,
    strategy: s.strategy,
    status: s.status,
    snapshot: { ...s, id: vaultId(chainOf(s), s.vault), chainId: chainOf(s) },
    last_record_id: opts.lastRecordId ?? `${chainOf(s)}:${randomHash()}:${randomHash()}:0:${s.vault}`,
    records_applied: opts.recordsApplied ?? 7,
    created_at: s.updatedAt - 86_400_000,
    updated_at: s.updatedAt,
  }));
  await db.query(
    `insert into vault_snapshot (vault, chain_id, owner, strategy, status, snapshot, state, last_record_id,
       records_applied, created_at, updated_at)
     select vault, chain_id, owner, strategy, status, snapshot, '{}'::jsonb, last_record_id, records_applied,
       created_at, updated_at
     from jsonb_to_recordset($1::jsonb) as x(vault text, chain_id int, owner text, strategy text, status text,
       snapshot jsonb, last_record_id text, records_applied bigint, created_at bigint, updated_at bigint)
     on conflict (chain_id, vault) do update set snapshot = excluded.snapshot, status = excluded.status,
       last_record_id = excluded.last_record_id, records_applied = excluded.records_applied,
       updated_at = excluded.updated_at`,
    [JSON.stringify(rows)],
  );
  const positions = snaps.flatMap((s) =>
    s.positions.map((p) => ({
      chain_id: chainOf(s),
      vault: s.vault,
      position_id: p.id,
      pool: randomAddress(),
      tick_lower: 75000,
      tick_upper: 77000,
      liquidity: '1000000000000',
      in_range: p.inRange,
      view: p,
    })),
  );
  if (positions.length > 0)
    await db.query(
      `insert into positions (chain_id, vault, position_id, pool, tick_lower, tick_upper, liquidity, in_range, view)
       select chain_id, vault, position_id, pool, tick_lower, tick_upper, liquidity::numeric, in_range, view
       from jsonb_to_recordset($1::jsonb) as x(chain_id int, vault text, position_id text, pool text, tick_lower int,
         tick_upper int, liquidity text, in_range boolean, view jsonb)
       on conflict (chain_id, vault, position_id) do nothing`,
      [JSON.stringify(positions)],
    );
}

export interface LedgerSpec {
  vault: string;
  /** A record type, or `balance.reconciled` (a row the projector books; no record of the log). */
  type: RecordType | typeof RECONCILED;
  blockNumber: number;
  txIndex?: number;
  logIndex?: number;
  /** Unix ms. */
  ts?: number;
  txHash?: string;
  blockHash?: string;
  chainId?: number;
  payload?: unknown;
}

const TOKEN0 = '0x1111111111111111111111111111111111111111';
const TOKEN1 = '0x2222222222222222222222222222222222222222';

/** A payload of `type` that parses with its record schema. */
export function samplePayload(type: RecordType | typeof RECONCILED): unknown {
  if (type === RECONCILED)
    return ledgerPayloadSchemas[RECONCILED].parse({
      token: TOKEN1,
      amount: '5000000',
      valueUsd: '5',
      bookedAs: 'capitalIn',
    });
  const samples: Record<RecordType, unknown> = {
    'vault.created': {
      owner: '0x3333333333333333333333333333333333333333',
      strategy: 'steady-eth',
      token0: TOKEN0,
      token1: TOKEN1,
      pool: '0x4444444444444444444444444444444444444444',
      performanceFeeBps: 2000,
    },
    deposit: { from: '0x3333333333333333333333333333333333333333', token: TOKEN1, amount: '1000000000' },
    withdrawal: { to: '0x3333333333333333333333333333333333333333', token: TOKEN1, amount: '250000000' },
    'position.opened': {
      positionId: '7',
      pool: '0x4444444444444444444444444444444444444444',
      tickLower: -200,
      tickUpper: 200,
      liquidity: '123456789',
      amount0: '1000',
      amount1: '2000',
    },
    'position.resized': { positionId: '7', liquidity: '23456789', amount0Delta: '-10', amount1Delta: '20' },
    'position.rebalanced': {
      positionId: '7',
      tickLower: -100,
      tickUpper: 300,
      liquidity: '1',
      amount0Out: '1',
      amount1Out: '2',
      amount0In: '3',
      amount1In: '4',
    },
    'position.closed': { positionId: '7', amount0: '5', amount1: '6' },
    'fees.collected': { positionId: '7', amount0: '5', amount1: '6' },
    'rewards.accrued': { rewardToken: TOKEN0, amount: '99' },
    'rewards.claimed': { rewardToken: TOKEN0, amount: '99' },
    'fee.charged': { token: TOKEN1, amount: '12', recipient: '0x5555555555555555555555555555555555555555' },
    'fee.rate.set': { performanceFeeBps: 1000 },
    'transfer.received': {
      from: '0x5555555555555555555555555555555555555555',
      token: TOKEN1,
      amount: '5000000',
    },
    'position.received': {
      from: '0x5555555555555555555555555555555555555555',
      pool: '0x4444444444444444444444444444444444444444',
      tickLower: -600,
      tickUpper: 600,
      liquidity: '1000000000',
      amount0: '1000000000000000',
      amount1: '3000000',
    },
    swap: { tokenIn: TOKEN1, amountIn: '1000000', tokenOut: TOKEN0, amountOut: '490000000000000' },
    suspended: { reason: 'oracle deviation' },
    resumed: {},
    'exit.requested': {},
    'exit.completed': {},
    'strategy.selected': { strategy: 'steady-eth' },
    mark: {},
    revert: { fromBlock: 1, orphanedBlockHashes: [`0x${'ab'.repeat(32)}`] },
  };
  return payloadSchemas[type].parse(samples[type]);
}

/** Inserts ledger rows; each carries a whole VaultRecord that parses with the record schema. */
export async function insertLedger(db: Writer, specs: readonly LedgerSpec[]): Promise<void> {
  if (specs.length === 0) return;
  const rows = specs.map((s, i) => {
    if (s.type === RECONCILED) {
      // As the projector writes it: after every transaction of the block, logIndex −2.
      const payload = s.payload ?? samplePayload(s.type);
      return {
        chain_id: s.chainId ?? 31337,
        block_hash: s.blockHash ?? blockHashOf(s.blockNumber),
        tx_hash: s.txHash ?? randomHash(),
        log_index: s.logIndex ?? RECONCILED_LOG_INDEX,
        vault: s.vault,
        block_number: s.blockNumber,
        tx_index: s.txIndex ?? RECONCILED_TX_INDEX,
        ts: s.ts ?? s.blockNumber * 1000,
        type: s.type,
        payload,
        record: { type: s.type, payload },
      };
    }
    const synthetic = s.type === 'mark' || s.type === 'revert';
    const record = vaultRecord.parse({
      schemaVersion: SCHEMA_VERSION,
      seq: i + 1,
      chainId: s.chainId ?? 31337,
      blockNumber: s.blockNumber,
      blockHash: s.blockHash ?? blockHashOf(s.blockNumber),
      blockTimestamp: Math.floor((s.ts ?? s.blockNumber * 1000) / 1000),
      txHash: synthetic ? `0x${'0'.repeat(64)}` : (s.txHash ?? randomHash()),
      txIndex: synthetic ? -1 : (s.txIndex ?? 0),
      logIndex: synthetic ? -1 : (s.logIndex ?? 0),
      vault: s.vault,
      lastInBlock: true,
      context: {
        tokens: [
          {
            address: TOKEN1,
            symbol: 'USDC',
            decimals: 6,
            priceUsd: '1',
            feed: TOKEN1,
            priceUpdatedAt: Math.floor((s.ts ?? s.blockNumber * 1000) / 1000),
            heartbeat: 3600,
          },
        ],
        pools: [],
        holdings: { balances: [], positions: [], pendingRewards: [] },
      },
      type: s.type,
      payload: s.payload ?? samplePayload(s.type),
    });
    return {
      chain_id: record.chainId,
      block_hash: record.blockHash,
      tx_hash: record.txHash,
      log_index: record.logIndex,
      vault: record.vault,
      block_number: record.blockNumber,
      tx_index: record.txIndex,
      ts: s.ts ?? record.blockTimestamp * 1000,
      type: record.type,
      payload: record.payload,
    };
  });
  await db.query(
    `insert into ledger (chain_id, block_hash, tx_hash, log_index, vault, block_number, tx_index, ts, type, payload)
     select chain_id, ${hexToBytes('block_hash')}, ${hexToBytes('tx_hash')}, log_index, ${hexToBytes('vault')},
            block_number, tx_index, ts, type, payload
     from jsonb_to_recordset($1::jsonb) as x(chain_id int, block_hash text, tx_hash text, log_index int, vault text,
       block_number bigint, tx_index int, ts bigint, type text, payload jsonb)`,
    [JSON.stringify(rows)],
  );
}

/** Deterministic block hash per block number (one canonical chain in fixtures). */
export const blockHashOf = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

export interface EquitySpec {
  ts: number;
  valueUsd: string;
  capitalInUsd: string;
  capitalOutUsd: string;
}

/** Equity points with seq = their order in `points` (offset by `seqFrom`), on `chainId` (default TEST_CHAIN). */
export async function insertEquity(
  db: Writer,
  vault: string,
  points: readonly EquitySpec[],
  seqFrom = 1,
  chainId = TEST_CHAIN,
) {
  if (points.length === 0) return;
  await db.query(
    `insert into equity_points (chain_id, vault, ts, block_number, seq, value_usd, capital_in_usd, capital_out_usd)
     select $3::int, ${hexToBytes('$1::text')}, ts, ts / 1000, seq, value_usd::numeric, capital_in_usd::numeric, capital_out_usd::numeric
     from jsonb_to_recordset($2::jsonb) as x(ts bigint, seq bigint, value_usd text, capital_in_usd text,
       capital_out_usd text)`,
    [
      vault,
      JSON.stringify(
        points.map((p, i) => ({
          ts: p.ts,
          seq: seqFrom + i,
          value_usd: p.valueUsd,
          capital_in_usd: p.capitalInUsd,
          capital_out_usd: p.capitalOutUsd,
        })),
      ),
      chainId,
    ],
  );
}

export const strategies = [
  {
    id: 'steady-eth',
    name: 'Steady ETH',
    description: 'Wide ranges on ETH/stable pairs.',
    riskNote: 'Impermanent loss when ETH trends.',
    pairs: [{ a: 'WETH', b: 'USDC', venues: ['uniswap-v3', 'aerodrome'] }],
    liveApr: 0.1234,
    sigma: 0.31,
    lp: {
      feeApr: 0.152,
      rewardApr: 0.0105,
      timeInRange: 0.91,
      rebalancesPerWeek: 0.75,
      divergenceApr: -0.0321,
      maxDrawdown: 0.0842,
    },
  },
  {
    id: 'new-meme',
    name: 'New meme',
    description: 'Narrow ranges on screened meme pairs.',
    riskNote: 'High volatility.',
    pairs: [],
    liveApr: null,
    sigma: null,
    lp: {
      feeApr: null,
      rewardApr: null,
      timeInRange: null,
      rebalancesPerWeek: null,
      divergenceApr: null,
      maxDrawdown: null,
    },
  },
];

export const universe = {
  assets: [
    {
      chainId: 31337,
      address: TOKEN0,
      symbol: 'WETH',
      name: 'Wrapped Ether',
      category: 'major' as const,
      decimals: 18,
      venues: ['uniswap-v3', 'aerodrome'],
      liquidityUsd: 125_000_000.5,
    },
    {
      chainId: 31337,
      address: TOKEN1,
      symbol: 'USDC',
      name: 'USD Coin',
      category: 'stable' as const,
      decimals: 6,
      venues: ['uniswap-v3'],
      liquidityUsd: 300_000_000,
    },
    {
      chainId: 31337,
      address: '0x6666666666666666666666666666666666666666',
      symbol: 'TSLAx',
      name: 'Tesla stock token',
      category: 'stock token' as const,
      decimals: 18,
      venues: ['uniswap-v3'],
      liquidityUsd: 2_000_000,
    },
    {
      chainId: 31337,
      address: '0x7777777777777777777777777777777777777777',
      symbol: 'PEPE',
      name: 'Pepe',
      category: 'meme' as const,
      decimals: 18,
      venues: ['aerodrome'],
      liquidityUsd: 900_000,
    },
  ],
  pairs: [
    {
      chainId: 31337,
      a: 'WETH',
      b: 'USDC',
      tokenA: TOKEN0,
      tokenB: TOKEN1,
      venues: ['uniswap-v3', 'aerodrome'],
      tvlUsd: 50_000_000,
      emissions: true,
    },
    {
      chainId: 31337,
      a: 'WETH',
      b: 'PEPE',
      tokenA: TOKEN0,
      tokenB: '0x7777777777777777777777777777777777777777',
      venues: ['aerodrome'],
      tvlUsd: 400_000,
      emissions: false,
    },
  ],
  screen: { version: 'screen-2025-01-01', screenedAt: 1_735_689_600_000 },
};

/** Writes the catalogue and universe above (what the screen projection will write). */
export async function insertCatalogue(db: Writer): Promise<void> {
  for (const [i, s] of strategies.entries())
    await db.query(
      `insert into strategies (id, name, description, risk_note, pairs, live_apr, sigma, history_days, display_order, updated_at,
                               lp_fee_apr, lp_reward_apr, lp_time_in_range, lp_rebalances_per_week, lp_divergence_apr, lp_max_drawdown)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
      [
        s.id,
        s.name,
        s.description,
        s.riskNote,
        JSON.stringify(s.pairs),
        s.liveApr,
        s.sigma,
        s.liveApr ? 90 : 3,
        i,
        1,
        s.lp.feeApr,
        s.lp.rewardApr,
        s.lp.timeInRange,
        s.lp.rebalancesPerWeek,
        s.lp.divergenceApr,
        s.lp.maxDrawdown,
      ],
    );
  for (const [rank, a] of universe.assets.entries())
    await db.query(
      `insert into universe_assets (chain_id, address, symbol, name, category, decimals, venues, liquidity_usd, rank, screen_version)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        a.chainId,
        a.address,
        a.symbol,
        a.name,
        a.category,
        a.decimals,
        a.venues,
        a.liquidityUsd,
        rank,
        universe.screen.version,
      ],
    );
  for (const [rank, p] of universe.pairs.entries())
    await db.query(
      `insert into universe_pairs (chain_id, token_a, token_b, a, b, venues, tvl_usd, emissions, rank, screen_version)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        p.chainId,
        p.tokenA,
        p.tokenB,
        p.a,
        p.b,
        p.venues,
        p.tvlUsd,
        p.emissions,
        rank,
        universe.screen.version,
      ],
    );
  await db.query(`insert into screen_meta (id, version, screened_at, updated_at) values (true, $1, $2, $3)`, [
    universe.screen.version,
    universe.screen.screenedAt,
    universe.screen.screenedAt,
  ]);
}
