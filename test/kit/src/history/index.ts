import { createHash } from 'node:crypto';
import {
  getLiquidityForAmounts,
  getSqrtRatioAtTick,
  type Payload,
  type RecordType,
  SCHEMA_VERSION,
  type ValuationContext,
  type VaultRecord,
  ZERO_HASH,
} from '@vault-yield/domain';

/**
 * Valid random histories for many vaults, for tests and the bench. Each vault is modelled just
 * enough (idle balances, open positions, pending rewards, suspension and exit flags) that every
 * record it emits is accepted by the fold; prices and the pool tick random-walk and are carried
 * in each record's valuation context. Deterministic for a given seed.
 */

type Hex = `0x${string}`;

export const CHAIN_ID = 31337;

export function hash(...parts: (string | number)[]): Hex {
  return `0x${createHash('sha256').update(parts.join('|')).digest('hex')}`;
}
const addr = (...parts: (string | number)[]): Hex => `0x${hash(...parts).slice(26)}`;

/** mulberry32: small, fast, seeded. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface PositionModel {
  id: string;
  tickLower: number;
  tickUpper: number;
  liquidity: bigint;
}

export interface VaultModel {
  index: number;
  vault: Hex;
  owner: Hex;
  pool: Hex;
  token0: Hex;
  token1: Hex;
  reward: Hex;
  created: boolean;
  tick: number;
  price0: number;
  priceReward: number;
  idle0: bigint;
  idle1: bigint;
  pending: bigint;
  idleReward: bigint;
  positions: PositionModel[];
  nextPositionId: number;
  suspended: boolean;
  exiting: boolean;
  lastBlock: number;
  seq: number;
}

export interface GeneratorOptions {
  vaults: number;
  seed?: number;
  /** First block number; blocks advance as records are emitted. */
  startBlock?: number;
  /** Records per block on average (many vaults share a block). */
  recordsPerBlock?: number;
  /**
   * Records a busy vault has in one block (default 1): k > 1 emits each created vault's events in
   * groups of k in one block, one price for the block, every record of the group carrying the
   * block's end holdings, only the last `lastInBlock` — as the indexer writes a busy vault's
   * block. Benches use it to price per-block valuation; tests keep the default.
   */
  recordsPerVaultBlock?: number;
  /**
   * Tokens sent straight to vaults (default off, so every other seed keeps its history): some as
   * `transfer.received` records, some with no record at all (the fold reconciles them at the
   * block's end, as it does what no record explains).
   */
  transfers?: boolean;
}

const TICK0 = -200_000; // ~2000 USDC per WETH with 18/6 decimals
const SPACING = 60;

export interface HistoryGenerator {
  /** The next record of a randomly chosen vault (vault.created first for each vault). */
  next(): VaultRecord;
  take(n: number): VaultRecord[];
  vaults(): readonly VaultModel[];
  /** Current block (the next record is at this block or later). */
  block(): number;
  /** A record of the given type for a vault at a block, with that block's hash (for reorg tests). */
  record<T extends RecordType>(
    m: VaultModel,
    type: T,
    payload: Payload<T>,
    at?: { block: number; blockHash: Hex; txIndex?: number; logIndex?: number },
  ): VaultRecord;
}

export function blockHash(block: number, fork = 0): Hex {
  return hash('block', block, fork);
}

export function createHistoryGenerator(options: GeneratorOptions): HistoryGenerator {
  const rand = prng(options.seed ?? 1);
  const perBlock = options.recordsPerBlock ?? 8;
  let block = options.startBlock ?? 1_000;
  let inBlock = 0;
  const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const bigBetween = (lo: bigint, hi: bigint) =>
    lo + (BigInt(Math.floor(rand() * 1e9)) * (hi - lo)) / 1_000_000_000n;
  const fraction = (x: bigint, lo: number, hi: number) =>
    (x * BigInt(Math.floor((lo + rand() * (hi - lo)) * 1000))) / 1000n;

  const models: VaultModel[] = Array.from({ length: options.vaults }, (_, i) => {
    const seed = options.seed ?? 1;
    return {
      index: i,
      vault: addr('vault', seed, i),
      owner: addr('owner', i % 97),
      pool: addr('pool', i % 13),
      token0: addr('token0', i % 13),
      token1: addr('token1', i % 13),
      reward: addr('reward'),
      created: false,
      tick: TICK0 + between(-500, 500),
      price0: 2000,
      priceReward: 0.5,
      idle0: 0n,
      idle1: 0n,
      pending: 0n,
      idleReward: 0n,
      positions: [],
      nextPositionId: 1,
      suspended: false,
      exiting: false,
      lastBlock: -1,
      seq: 0,
    };
  });

  /** The vault's holdings after its record (one record per vault per block). */
  function holdings(m: VaultModel): ValuationContext['holdings'] {
    const balances = [
      { token: m.token0, amount: m.idle0 },
      { token: m.token1, amount: m.idle1 },
      { token: m.reward, amount: m.idleReward },
    ]
      .filter((b) => b.amount > 0n)
      .map((b) => ({ token: b.token, amount: b.amount.toString() }));
    return {
      balances,
      positions: m.positions.map((p) => ({
        id: p.id,
        pool: m.pool,
        tickLower: p.tickLower,
        tickUpper: p.tickUpper,
        liquidity: p.liquidity.toString(),
        owed0: '0',
        owed1: '0',
      })),
      pendingRewards: m.pending > 0n ? [{ token: m.reward, amount: m.pending.toString() }] : [],
    };
  }

  function context(m: VaultModel, ts: number): ValuationContext {
    const token = (address: Hex, symbol: string, decimals: number, priceUsd: string, i: number) => ({
      address,
      symbol,
      decimals,
      priceUsd,
      feed: addr('feed', i, address),
      priceUpdatedAt: ts,
      heartbeat: 3600,
    });
    return {
      tokens: [
        token(m.token0, 'WETH', 18, m.price0.toFixed(8), 0),
        token(m.token1, 'USDC', 6, '1', 1),
        token(m.reward, 'RWD', 18, m.priceReward.toFixed(8), 2),
      ],
      pools: [
        {
          address: m.pool,
          venue: 'uniswap-v3',
          feeTier: 3000,
          sqrtPriceX96: getSqrtRatioAtTick(m.tick).toString(),
          tick: m.tick,
          token0: m.token0,
          token1: m.token1,
        },
      ],
      holdings: holdings(m),
    };
  }

  function recordAt<T extends RecordType>(
    m: VaultModel,
    type: T,
    payload: Payload<T>,
    at?: { block: number; blockHash: Hex; txIndex?: number; logIndex?: number },
  ): VaultRecord {
    let b = at?.block;
    if (b === undefined) {
      if (inBlock >= perBlock || block <= m.lastBlock) {
        block = Math.max(block + 1, m.lastBlock + 1);
        inBlock = 0;
      }
      b = block;
      inBlock++;
    }
    m.lastBlock = Math.max(m.lastBlock, b);
    m.seq++;
    const synthetic = type === 'mark' || type === 'revert';
    return {
      schemaVersion: SCHEMA_VERSION,
      seq: m.seq,
      chainId: CHAIN_ID,
      blockNumber: b,
      blockHash: at?.blockHash ?? blockHash(b),
      blockTimestamp: 1_700_000_000 + b * 2,
      txHash: synthetic ? ZERO_HASH : hash('tx', m.vault, m.seq, b),
      txIndex: synthetic ? -1 : (at?.txIndex ?? inBlock),
      logIndex: synthetic ? -1 : (at?.logIndex ?? inBlock),
      vault: m.vault,
      lastInBlock: true,
      context: context(m, 1_700_000_000 + b * 2),
      type,
      payload,
    } as VaultRecord;
  }

  function movePrices(m: VaultModel) {
    m.tick += between(-40, 40);
    m.price0 = Math.max(1, m.price0 * (1 + (rand() - 0.5) * 0.01));
    m.priceReward = Math.max(0.01, m.priceReward * (1 + (rand() - 0.5) * 0.02));
  }

  /**
   * The vault's next record. `inBlock`: a later record of a group in the first one's block (its
   * price stands; never a mark: a mark is a vault's only record of its block).
   */
  function step(m: VaultModel, inBlock?: { block: number; blockHash: Hex; index: number }): VaultRecord {
    const at = inBlock && {
      block: inBlock.block,
      blockHash: inBlock.blockHash,
      txIndex: 1_000 + inBlock.index,
      logIndex: 1_000 + inBlock.index,
    };
    const record = <T extends RecordType>(m: VaultModel, type: T, payload: Payload<T>) =>
      recordAt(m, type, payload, at);
    if (!m.created) {
      m.created = true;
      return record(m, 'vault.created', {
        owner: m.owner,
        strategy: `strat-${m.index % 5}`,
        token0: m.token0,
        token1: m.token1,
        pool: m.pool,
      });
    }
    if (!inBlock) movePrices(m);
    const r = rand();
    const empty = m.idle0 === 0n && m.idle1 === 0n && m.positions.length === 0;
    if (empty || r < 0.1) {
      const token0 = rand() < 0.5;
      const amount = token0 ? bigBetween(10n ** 17n, 10n ** 19n) : bigBetween(10n ** 8n, 2n * 10n ** 10n);
      if (token0) m.idle0 += amount;
      else m.idle1 += amount;
      return record(m, 'deposit', {
        from: m.owner,
        token: token0 ? m.token0 : m.token1,
        amount: amount.toString(),
      });
    }
    if (r < 0.2 && m.positions.length < 3 && m.idle0 > 0n && m.idle1 > 0n) {
      const a0 = fraction(m.idle0, 0.3, 0.7);
      const a1 = fraction(m.idle1, 0.3, 0.7);
      const center = Math.round(m.tick / SPACING) * SPACING;
      const width = between(2, 12) * SPACING;
      const tickLower = center - width;
      const tickUpper = center + width;
      const liquidity = getLiquidityForAmounts(
        getSqrtRatioAtTick(m.tick),
        getSqrtRatioAtTick(tickLower),
        getSqrtRatioAtTick(tickUpper),
        a0,
        a1,
      );
      const id = String(m.index * 1000 + m.nextPositionId++);
      m.idle0 -= a0;
      m.idle1 -= a1;
      m.positions.push({ id, tickLower, tickUpper, liquidity });
      return record(m, 'position.opened', {
        positionId: id,
        pool: m.pool,
        tickLower,
        tickUpper,
        liquidity: liquidity.toString(),
        amount0: a0.toString(),
        amount1: a1.toString(),
      });
    }
    const pos = m.positions.length > 0 ? m.positions[between(0, m.positions.length - 1)] : undefined;
    if (r < 0.3 && pos) {
      const f0 = bigBetween(0n, 10n ** 15n);
      const f1 = bigBetween(0n, 10n ** 6n);
      m.idle0 += f0;
      m.idle1 += f1;
      return record(m, 'fees.collected', {
        positionId: pos.id,
        amount0: f0.toString(),
        amount1: f1.toString(),
      });
    }
    if (r < 0.34 && pos) {
      // Rebalance around the current tick: everything out of the old range, part of it back in.
      const out0 = bigBetween(0n, 10n ** 17n);
      const out1 = bigBetween(0n, 10n ** 8n);
      const in0 = fraction(m.idle0 + out0, 0.2, 0.6);
      const in1 = fraction(m.idle1 + out1, 0.2, 0.6);
      const center = Math.round(m.tick / SPACING) * SPACING;
      const width = between(2, 12) * SPACING;
      pos.tickLower = center - width;
      pos.tickUpper = center + width;
      pos.liquidity = getLiquidityForAmounts(
        getSqrtRatioAtTick(m.tick),
        getSqrtRatioAtTick(pos.tickLower),
        getSqrtRatioAtTick(pos.tickUpper),
        in0,
        in1,
      );
      m.idle0 += out0 - in0;
      m.idle1 += out1 - in1;
      return record(m, 'position.rebalanced', {
        positionId: pos.id,
        tickLower: pos.tickLower,
        tickUpper: pos.tickUpper,
        liquidity: pos.liquidity.toString(),
        amount0Out: out0.toString(),
        amount1Out: out1.toString(),
        amount0In: in0.toString(),
        amount1In: in1.toString(),
      });
    }
    if (r < 0.37 && pos) {
      const back0 = bigBetween(0n, 10n ** 18n);
      const back1 = bigBetween(0n, 10n ** 9n);
      m.idle0 += back0;
      m.idle1 += back1;
      m.positions = m.positions.filter((p) => p !== pos);
      return record(m, 'position.closed', {
        positionId: pos.id,
        amount0: back0.toString(),
        amount1: back1.toString(),
      });
    }
    if (r < 0.4 && pos && m.idle0 > 0n) {
      const d0 = fraction(m.idle0, 0.05, 0.3);
      pos.liquidity += pos.liquidity / 10n;
      m.idle0 -= d0;
      return record(m, 'position.resized', {
        positionId: pos.id,
        liquidity: pos.liquidity.toString(),
        amount0Delta: d0.toString(),
        amount1Delta: '0',
      });
    }
    if (r < 0.46) {
      const amount = bigBetween(10n ** 15n, 10n ** 17n);
      m.pending += amount;
      return record(m, 'rewards.accrued', { rewardToken: m.reward, amount: amount.toString() });
    }
    if (r < 0.49 && m.pending > 0n) {
      const amount = fraction(m.pending, 0.5, 1);
      m.pending -= amount;
      m.idleReward += amount;
      return record(m, 'rewards.claimed', { rewardToken: m.reward, amount: amount.toString() });
    }
    if (r < 0.53 && (m.idle0 > 0n || m.idle1 > 0n)) {
      const token0 = m.idle0 > 0n && (m.idle1 === 0n || rand() < 0.5);
      const amount = fraction(token0 ? m.idle0 : m.idle1, 0.1, 0.5);
      if (token0) m.idle0 -= amount;
      else m.idle1 -= amount;
      return record(m, 'withdrawal', {
        to: m.owner,
        token: token0 ? m.token0 : m.token1,
        amount: amount.toString(),
      });
    }
    if (r < 0.54 && m.idle1 > 0n) {
      const amount = fraction(m.idle1, 0.001, 0.01);
      m.idle1 -= amount;
      return record(m, 'fee.charged', {
        token: m.token1,
        amount: amount.toString(),
        recipient: addr('treasury'),
      });
    }
    if (r < 0.55) {
      m.suspended = !m.suspended;
      return m.suspended ? record(m, 'suspended', { reason: 'oracle deviation' }) : record(m, 'resumed', {});
    }
    if (r < 0.56) {
      m.exiting = !m.exiting;
      return m.exiting ? record(m, 'exit.requested', {}) : record(m, 'exit.completed', {});
    }
    if (r < 0.565) return record(m, 'strategy.selected', { strategy: `strat-${between(0, 4)}` });
    if (options.transfers && r < 0.6) {
      const amount = bigBetween(10n ** 6n, 10n ** 9n);
      m.idle1 += amount;
      // One in three sent in a transaction where a vault event (here: rewards accruing) is all
      // the indexer publishes: the transfer has no record, the fold reconciles it.
      if (rand() < 1 / 3) {
        const reward = bigBetween(10n ** 15n, 10n ** 17n);
        m.pending += reward;
        return record(m, 'rewards.accrued', { rewardToken: m.reward, amount: reward.toString() });
      }
      return record(m, 'transfer.received', {
        from: addr('stranger'),
        token: m.token1,
        amount: amount.toString(),
      });
    }
    if (inBlock) {
      const amount = bigBetween(10n ** 15n, 10n ** 17n);
      m.pending += amount;
      return record(m, 'rewards.accrued', { rewardToken: m.reward, amount: amount.toString() });
    }
    return record(m, 'mark', {});
  }

  /** A created vault's records of one block (see recordsPerVaultBlock): k, or one mark. */
  function blockOf(m: VaultModel, k: number): VaultRecord[] {
    const first = step(m);
    if (first.type === 'mark') return [first];
    const group: VaultRecord[] = [first];
    for (let i = 1; i < k; i++)
      group.push(step(m, { block: first.blockNumber, blockHash: first.blockHash, index: i }));
    // Every record of the block is valued at the block's end, as the indexer reads it.
    const end = context(m, first.blockTimestamp);
    return group.map((r, i) => ({ ...r, context: end, lastInBlock: i === group.length - 1 }) as VaultRecord);
  }

  const uncreated = [...models];
  const perVaultBlock = options.recordsPerVaultBlock ?? 1;
  const queued: VaultRecord[] = [];
  const gen: HistoryGenerator = {
    next() {
      const q = queued.shift();
      if (q) return q;
      // Create vaults early (a quarter of the first records), then pick at random.
      if (uncreated.length > 0 && (rand() < 0.25 || models.length === uncreated.length)) {
        return step(uncreated.shift() as VaultModel);
      }
      const created = models.length - uncreated.length;
      const m = models[Math.floor(rand() * created)] as VaultModel;
      if (perVaultBlock <= 1) return step(m);
      const [head, ...rest] = blockOf(m, perVaultBlock);
      queued.push(...rest);
      return head as VaultRecord;
    },
    take(n) {
      return Array.from({ length: n }, () => gen.next());
    },
    vaults: () => models,
    block: () => block,
    record: recordAt,
  };
  return gen;
}
