/**
 * The LP figures (#46) of every vault of a factory computed from the chain alone, block by block:
 * the reference the fold's `lp` is checked against (pipeline.test.ts). Like index.ts it shares
 * nothing with packages/domain or packages/chain: events are decoded here, amounts are the pool's.
 *   fees earned  per token: Σ the pool's Collect (owner = vault) − Σ its Burn principal (each burn
 *                of the vault collects its principal in the same call; a rebalance or collect
 *                takes the fees too) + what the pool owes the vault now on every range ever
 *                minted for it (FeeProbe.held: a zero-liquidity burn as the vault in an eth_call).
 *                In USD: each block's Δ valued at that block's feed answers.
 *   time in range  each interval between two consecutive blocks counts as the earlier block
 *                stood: the vault's positions there (livePositions, then every other range the
 *                pool holds something for the vault at, named by its pool key) and its pool's tick
 *                (slot0, read at every block). A position counts while it holds liquidity; the vault
 *                is open while one does, in range while every open one is (lower ≤ tick < upper).
 *   holding      the basket of what came in (Deposited, tokens transferred in that no vault
 *                event explains, what someone else paid the pool for liquidity minted for the
 *                vault), each Withdrawn scaling it by 1 − W / (V + W) — V the vault's value at the
 *                block's end by the independent valuation (index.ts valueAt), W the withdrawal at
 *                the block's feed answers — valued at the feed answers.
 *   tokens       in: those inflows; out: Σ Withdrawn.
 * A feed's answer ≤ 0 is not a price: the last valid one stands (as the service reads feeds).
 * Reads are batched (JSON-RPC batches, one eth_call per vault and block for all its ranges) and
 * made only where state can move: ticks and block times at every block, a vault's positions at
 * the blocks where its pool or the vault itself logged something (every state change of a v3 pool
 * or of a vault emits an event), feed answers where a feed logged.
 */
import {
  type Address,
  createPublicClient,
  decodeEventLog,
  encodePacked,
  http,
  keccak256,
  type Log,
  type PublicClient,
  parseAbi,
} from 'viem';
import { valueAt } from './index.js';
import { heldAt } from './probe.js';

/** Scale of exact USD sums: 10^26 (18 token decimals + 8 feed decimals at most). */
export const USD_SCALE = 26;
/** Scale of the holding basket's token amounts (raw · 10^18: fractional after a withdrawal). */
const ONE = 10n ** 18n;

const events = parseAbi([
  'event VaultCreated(address indexed vault, address indexed owner, bytes32 strategy, address token0, address token1, address pool, uint16 performanceFeeBps)',
  'event FeedSet(address indexed token, address feed)',
  'event Mint(address sender, address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount, uint256 amount0, uint256 amount1)',
  'event Burn(address indexed owner, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount, uint256 amount0, uint256 amount1)',
  'event Collect(address indexed owner, address recipient, int24 indexed tickLower, int24 indexed tickUpper, uint128 amount0, uint128 amount1)',
  'event Deposited(address indexed from, address indexed token, uint256 amount)',
  'event Withdrawn(address indexed to, address indexed token, uint256 amount)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt)',
  'event Swapped(address indexed tokenIn, uint256 amountIn, address indexed tokenOut, uint256 amountOut)',
]);
const reads = parseAbi([
  'function rewardToken() view returns (address)',
  'function gauge() view returns (address)',
  'function livePositions() view returns (uint256[] ids, int24[] tickLowers, int24[] tickUppers)',
  'function slot0() view returns (uint160 sqrtPriceX96, int24 tick, uint16, uint16, uint16, uint8, bool)',
  'function decimals() view returns (uint8)',
  'function latestRoundData() view returns (uint80, int256 answer, uint256, uint256, uint80)',
  'function fee() view returns (uint24)',
]);

type Decoded = { eventName: string; args: Record<string, unknown> };
const lower = (a: string) => a.toLowerCase() as Address;
const key = (lo: number, hi: number) => `${lo}:${hi}`;
type Amounts = Map<Address, bigint>;
const plus = (m: Amounts, t: Address, x: bigint) => {
  if (x !== 0n) m.set(t, (m.get(t) ?? 0n) + x);
};
const record = (m: Amounts): Record<Address, bigint> =>
  Object.fromEntries([...m].filter(([, x]) => x !== 0n)) as Record<Address, bigint>;

export interface RangeTime {
  openMs: number;
  inRangeMs: number;
}

/** A vault's figures at the end of a block. */
export interface LpFigures {
  block: number;
  /** Per token, raw: collected + owed (fees only). */
  earned: Record<Address, bigint>;
  /** Per token, raw: Σ Collect − Σ Burn principal. */
  collected: Record<Address, bigint>;
  /** Per token, raw: what the pool owes now beyond principal. */
  uncollected: Record<Address, bigint>;
  /** Σ each block's Δ earned at that block's prices (10^USD_SCALE). */
  earnedUsd: bigint;
  openMs: number;
  inRangeMs: number;
  /** By position id (a live one's vault id, any other range's pool key as a decimal). */
  ranges: Record<string, RangeTime>;
  /** Ids of the positions holding liquidity, sorted. */
  open: string[];
  /** The holding basket at this block's prices (10^USD_SCALE). */
  holdUsd: bigint;
  flowsIn: Record<Address, bigint>;
  flowsOut: Record<Address, bigint>;
  /** The vault's own swaps (Swapped events), what they gave up at the block's feed prices and the pool's fee in it (10^USD_SCALE). */
  swaps: number;
  swapCostUsd: bigint;
  swapFeesUsd: bigint;
}

interface Held {
  id: string;
  tickLower: number;
  tickUpper: number;
  liquidity: bigint;
}

interface VaultTruth {
  address: Address;
  owner: Address;
  pool: Address;
  token0: Address;
  token1: Address;
  rewardToken: Address;
  gauge: Address;
  createdBlock: number;
  /** Every range a Mint named the vault the owner of (phase 1: up to the block planned last). */
  ranges: { tickLower: number; tickUpper: number }[];
  // --- phase 3 (the walk), at the last block walked ---
  held: Held[];
  owed: Amounts;
  collectedRaw: Amounts;
  burnedRaw: Amounts;
  valued: Amounts;
  earnedUsd: bigint;
  /** Blocks where the fees earned (token terms) moved. */
  earnedMoved: number[];
  openMs: number;
  inRangeMs: number;
  rangeTimes: Map<string, RangeTime>;
  basket: Amounts;
  flowsIn: Amounts;
  flowsOut: Amounts;
  /** Withdrawals that scaled the basket. */
  scaled: number;
  /** The pool's fee tier (hundredths of a basis point). */
  feeTier: bigint;
  swaps: number;
  swapCostUsd: bigint;
  swapFeesUsd: bigint;
  history: LpFigures[];
}

/** What is read at one block. */
interface Plan {
  block: number;
  pools: Address[];
  vaults: { v: VaultTruth; ranges: { tickLower: number; tickUpper: number }[] }[];
  feeds: Address[];
}
/** A vault at a block: its live positions, and what the pool holds for it at each range. */
interface VaultRead {
  live: { id: bigint; tickLower: number; tickUpper: number }[];
  ranges: { tickLower: number; tickUpper: number }[];
  held: { liquidity: bigint; owed0: bigint; owed1: bigint }[];
}
interface Read {
  ts: number;
  ticks: Map<Address, number>;
  vaults: Map<Address, VaultRead>;
  answers: Map<Address, bigint>;
}

export interface LpTruth {
  /** Walks the chain up to `block` (inclusive). */
  advance(block: number): Promise<void>;
  /** A vault's figures at the end of `block` (walked already). */
  at(vault: Address, block: number): LpFigures;
  /** Blocks up to `block` where the vault's fees earned moved (in token terms). */
  earnedMovedAt(vault: Address, block: number): number[];
  /** Withdrawals of the vault that scaled its basket so far. */
  scaledWithdrawals(vault: Address): number;
  decimals(token: Address): number;
  client: PublicClient;
}

export function createLpTruth(rpcUrl: string, factory: Address, fromBlock: bigint): LpTruth {
  const client = createPublicClient({
    transport: http(rpcUrl, { batch: { batchSize: 200, wait: 0 } }),
    cacheTime: 0,
  }) as PublicClient;
  const fac = lower(factory);
  const vaults = new Map<Address, VaultTruth>();
  const byPool = new Map<Address, VaultTruth[]>();
  const byToken = new Map<Address, Set<VaultTruth>>();
  const feedOf = new Map<Address, Address>(); // token → feed
  const tokenOfFeed = new Map<Address, Address>();
  const decimals = new Map<Address, number>(); // tokens and feeds
  /** Last valid answer per feed. */
  const answer = new Map<Address, bigint>();
  let planned = Number(fromBlock) - 1;
  let walked = Number(fromBlock) - 1;
  let lastTs = 0;
  const ticks = new Map<Address, number>();

  const decimalsOf = async (a: Address, block: bigint) => {
    if (!decimals.has(a))
      decimals.set(
        a,
        await client.readContract({ address: a, abi: reads, functionName: 'decimals', blockNumber: block }),
      );
  };

  function decode(l: Log): Decoded | null {
    try {
      return decodeEventLog({ abi: events, data: l.data, topics: l.topics }) as unknown as Decoded;
    } catch {
      return null;
    }
  }

  /** Phase 1: the vaults, feeds and ranges the logs name, and what to read at each block. */
  async function plan(byBlock: Map<number, Log[]>, from: number, to: number): Promise<Plan[]> {
    const plans: Plan[] = [];
    for (let b = from; b <= to; b++) {
      const refresh = new Set<VaultTruth>();
      const feeds = new Set<Address>();
      for (const l of byBlock.get(b) ?? []) {
        const at = lower(l.address);
        const e = decode(l);
        if (at === fac && e?.eventName === 'VaultCreated') {
          const a = e.args as {
            vault: Address;
            owner: Address;
            token0: Address;
            token1: Address;
            pool: Address;
          };
          const address = lower(a.vault);
          const blockNumber = BigInt(b);
          const [rewardToken, gauge, feeTier] = await Promise.all([
            client.readContract({ address, abi: reads, functionName: 'rewardToken', blockNumber }),
            client.readContract({ address, abi: reads, functionName: 'gauge', blockNumber }),
            client.readContract({ address: lower(a.pool), abi: reads, functionName: 'fee', blockNumber }),
          ]);
          const v: VaultTruth = {
            address,
            owner: lower(a.owner),
            pool: lower(a.pool),
            token0: lower(a.token0),
            token1: lower(a.token1),
            rewardToken: lower(rewardToken),
            gauge: lower(gauge),
            createdBlock: b,
            ranges: [],
            held: [],
            owed: new Map(),
            collectedRaw: new Map(),
            burnedRaw: new Map(),
            valued: new Map(),
            earnedUsd: 0n,
            earnedMoved: [],
            openMs: 0,
            inRangeMs: 0,
            rangeTimes: new Map(),
            basket: new Map(),
            flowsIn: new Map(),
            flowsOut: new Map(),
            scaled: 0,
            feeTier: BigInt(feeTier),
            swaps: 0,
            swapCostUsd: 0n,
            swapFeesUsd: 0n,
            history: [],
          };
          for (const t of [v.token0, v.token1, v.rewardToken]) {
            await decimalsOf(t, blockNumber);
            byToken.set(t, new Set([...(byToken.get(t) ?? []), v]));
          }
          vaults.set(address, v);
          byPool.set(v.pool, [...(byPool.get(v.pool) ?? []), v]);
          refresh.add(v);
        } else if (at === fac && e?.eventName === 'FeedSet') {
          const a = e.args as { token: Address; feed: Address };
          feedOf.set(lower(a.token), lower(a.feed));
          tokenOfFeed.set(lower(a.feed), lower(a.token));
          await decimalsOf(lower(a.feed), BigInt(b));
          feeds.add(lower(a.feed));
        } else if (byPool.has(at)) {
          for (const v of byPool.get(at)!) refresh.add(v);
          if (e?.eventName === 'Mint') {
            const a = e.args as { owner: Address; tickLower: number; tickUpper: number };
            const v = vaults.get(lower(a.owner));
            if (v && !v.ranges.some((r) => key(r.tickLower, r.tickUpper) === key(a.tickLower, a.tickUpper)))
              v.ranges = [...v.ranges, { tickLower: a.tickLower, tickUpper: a.tickUpper }];
          }
        } else if (vaults.has(at)) refresh.add(vaults.get(at)!);
        else if (tokenOfFeed.has(at)) feeds.add(at);
      }
      plans.push({
        block: b,
        pools: [...byPool.keys()],
        vaults: [...refresh].map((v) => ({ v, ranges: v.ranges })),
        feeds: [...feeds],
      });
    }
    planned = to;
    return plans;
  }

  /** Phase 2: the reads of one block (one JSON-RPC batch, mostly). */
  async function read(p: Plan): Promise<Read> {
    const blockNumber = BigInt(p.block);
    const [block, tickList, vaultList, answerList] = await Promise.all([
      client.getBlock({ blockNumber }),
      Promise.all(
        p.pools.map((address) =>
          client.readContract({ address, abi: reads, functionName: 'slot0', blockNumber }),
        ),
      ),
      Promise.all(
        p.vaults.map(async ({ v, ranges }) => {
          const [live, held] = await Promise.all([
            client.readContract({
              address: v.address,
              abi: reads,
              functionName: 'livePositions',
              blockNumber,
            }),
            heldAt(client, v.address, v.pool, ranges, blockNumber),
          ]);
          return {
            live: live[0].map((id, i) => ({ id, tickLower: live[1][i]!, tickUpper: live[2][i]! })),
            ranges,
            held,
          };
        }),
      ),
      Promise.all(
        p.feeds.map((address) =>
          client.readContract({ address, abi: reads, functionName: 'latestRoundData', blockNumber }),
        ),
      ),
    ]);
    return {
      ts: Number(block.timestamp),
      ticks: new Map(p.pools.map((a, i) => [a, tickList[i]![1]])),
      vaults: new Map(p.vaults.map(({ v }, i) => [v.address, vaultList[i]!])),
      answers: new Map(p.feeds.map((f, i) => [f, answerList[i]![1]])),
    };
  }

  /** USD (10^USD_SCALE) of `raw` of `token` at the last valid answer of its feed. */
  function usd(token: Address, raw: bigint): bigint {
    const feed = feedOf.get(token);
    const a = feed ? answer.get(feed) : undefined;
    if (!feed || a === undefined) return 0n;
    return raw * a * 10n ** BigInt(USD_SCALE - decimals.get(token)! - decimals.get(feed)!);
  }

  /** Phase 3: one block, in order. */
  async function walk(p: Plan, r: Read, logs: Log[]): Promise<void> {
    const b = p.block;
    for (const [feed, a] of r.answers) if (a > 0n) answer.set(feed, a);
    // Deposits, by transaction: their transferFrom's Transfer is no inflow of its own.
    const deposits = new Set<string>();
    const decoded = logs.map((l) => ({ l, e: decode(l) }));
    for (const { l, e } of decoded)
      if (e?.eventName === 'Deposited' && vaults.has(lower(l.address))) {
        const a = e.args as { from: Address; token: Address; amount: bigint };
        deposits.add(`${l.transactionHash}:${lower(a.from)}:${lower(a.token)}:${a.amount}`);
      }
    const flows = new Map<VaultTruth, { kind: 'in' | 'out'; token: Address; raw: bigint }[]>();
    const flow = (v: VaultTruth, kind: 'in' | 'out', token: Address, raw: bigint) => {
      if (raw === 0n) return;
      flows.set(v, [...(flows.get(v) ?? []), { kind, token, raw }]);
      plus(kind === 'in' ? v.flowsIn : v.flowsOut, token, raw);
    };
    for (const { l, e } of decoded) {
      if (!e) continue;
      const at = lower(l.address);
      const a = e.args;
      if (byPool.has(at) && (e.eventName === 'Mint' || e.eventName === 'Burn' || e.eventName === 'Collect')) {
        const v = vaults.get(lower(a.owner as Address));
        if (!v || v.pool !== at) continue;
        const a0 = a.amount0 as bigint;
        const a1 = a.amount1 as bigint;
        if (e.eventName === 'Collect') {
          plus(v.collectedRaw, v.token0, a0);
          plus(v.collectedRaw, v.token1, a1);
        } else if (e.eventName === 'Burn') {
          plus(v.burnedRaw, v.token0, a0);
          plus(v.burnedRaw, v.token1, a1);
        } else if (lower(a.sender as Address) !== v.address) {
          // liquidity minted for the vault by someone else: what they paid the pool came in
          flow(v, 'in', v.token0, a0);
          flow(v, 'in', v.token1, a1);
        }
      } else if (vaults.has(at) && (e.eventName === 'Deposited' || e.eventName === 'Withdrawn')) {
        const v = vaults.get(at)!;
        flow(v, e.eventName === 'Deposited' ? 'in' : 'out', lower(a.token as Address), a.amount as bigint);
      } else if (vaults.has(at) && e.eventName === 'Swapped') {
        // The vault's own swap: what it paid minus what it got, at this block's feed prices; the
        // pool's fee is amountIn · fee / 10^6 of what it paid.
        const v = vaults.get(at)!;
        const tokenIn = lower(a.tokenIn as Address);
        const paid = a.amountIn as bigint;
        v.swaps++;
        v.swapCostUsd += usd(tokenIn, paid) - usd(lower(a.tokenOut as Address), a.amountOut as bigint);
        v.swapFeesUsd += (usd(tokenIn, paid) * v.feeTier) / 1_000_000n;
      } else if (e.eventName === 'Transfer' && byToken.has(at)) {
        const v = vaults.get(lower(a.to as Address));
        const from = lower(a.from as Address);
        if (!v || !byToken.get(at)!.has(v) || from === v.address) continue;
        // the pool's collects and the gauge's reward payments are the vault's own earnings
        if (from === v.pool || from === v.gauge) continue;
        if (deposits.has(`${l.transactionHash}:${from}:${at}:${a.value}`)) continue;
        flow(v, 'in', at, a.value as bigint);
      }
    }

    const dtMs = walked >= Number(fromBlock) ? (r.ts - lastTs) * 1000 : 0;
    for (const v of vaults.values()) {
      if (v.createdBlock > b) continue;
      // time in range: the interval since the previous block, as that block stood
      const fresh = r.vaults.get(v.address);
      const next = fresh ? heldOf(v, fresh) : v.held;
      if (v.createdBlock < b && dtMs > 0) {
        const tick = ticks.get(v.pool);
        let open = false;
        let all = true;
        const ids = new Set(next.map((h) => h.id));
        for (const h of v.held) {
          if (h.liquidity === 0n) continue;
          open = true;
          const inRange = tick !== undefined && h.tickLower <= tick && tick < h.tickUpper;
          if (!inRange) all = false;
          if (!ids.has(h.id)) continue;
          const t = v.rangeTimes.get(h.id) ?? { openMs: 0, inRangeMs: 0 };
          v.rangeTimes.set(h.id, { openMs: t.openMs + dtMs, inRangeMs: t.inRangeMs + (inRange ? dtMs : 0) });
        }
        if (open) {
          v.openMs += dtMs;
          if (all) v.inRangeMs += dtMs;
        }
      }
      for (const id of v.rangeTimes.keys()) if (!next.some((h) => h.id === id)) v.rangeTimes.delete(id);
      v.held = next;
      if (fresh) {
        v.owed = new Map();
        for (const h of fresh.held) {
          plus(v.owed, v.token0, h.owed0);
          plus(v.owed, v.token1, h.owed1);
        }
      }
      // fees earned: Σ Collect − Σ Burn + owed; what moved is valued at this block's prices
      let moved = false;
      for (const t of [v.token0, v.token1]) {
        const earned = (v.collectedRaw.get(t) ?? 0n) - (v.burnedRaw.get(t) ?? 0n) + (v.owed.get(t) ?? 0n);
        const was = v.valued.get(t) ?? 0n;
        if (earned === was) continue;
        moved = true;
        v.earnedUsd += usd(t, earned - was);
        v.valued.set(t, earned);
      }
      if (moved) v.earnedMoved.push(b);
      // the basket
      const fl = flows.get(v) ?? [];
      for (const f of fl) {
        if (f.kind === 'in') {
          plus(v.basket, f.token, f.raw * ONE);
          continue;
        }
        // In this history a transaction is a block (automine), and no vault call makes two
        // flows besides a withdrawal: V + W is the value just before it.
        if (fl.length !== 1)
          throw new Error(`block ${b}: vault ${v.address} has a withdrawal among ${fl.length} flows`);
        const end = await valueAt(client, v.address, BigInt(b));
        const [int, frac = ''] = end.valueUsd.replace('-', '').split('.');
        const valueEnd = BigInt(int! + frac.padEnd(USD_SCALE, '0').slice(0, USD_SCALE));
        const w = usd(f.token, f.raw);
        const before = valueEnd + w;
        if (before > 0n && w > 0n) {
          for (const [t, x] of v.basket) v.basket.set(t, (x * (before - w)) / before);
          v.scaled++;
        }
      }
      v.history.push(figures(v, b));
    }
    for (const [pool, t] of r.ticks) ticks.set(pool, t);
    lastTs = r.ts;
    walked = b;
  }

  /** The positions the chain holds for the vault: its live ones, then any other range holding something. */
  function heldOf(v: VaultTruth, f: VaultRead): Held[] {
    const at = new Map(f.ranges.map((rg, i) => [key(rg.tickLower, rg.tickUpper), f.held[i]!]));
    const out: Held[] = [];
    for (const l of f.live) {
      const h = at.get(key(l.tickLower, l.tickUpper));
      if (!h)
        throw new Error(`vault ${v.address}: live range ${key(l.tickLower, l.tickUpper)} was never minted`);
      out.push({
        id: l.id.toString(),
        tickLower: l.tickLower,
        tickUpper: l.tickUpper,
        liquidity: h.liquidity,
      });
    }
    for (const [i, rg] of f.ranges.entries()) {
      if (f.live.some((l) => l.tickLower === rg.tickLower && l.tickUpper === rg.tickUpper)) continue;
      const h = f.held[i]!;
      if (h.liquidity === 0n && h.owed0 === 0n && h.owed1 === 0n) continue;
      const id = BigInt(
        keccak256(encodePacked(['address', 'int24', 'int24'], [v.address, rg.tickLower, rg.tickUpper])),
      ).toString();
      out.push({ id, tickLower: rg.tickLower, tickUpper: rg.tickUpper, liquidity: h.liquidity });
    }
    return out;
  }

  function figures(v: VaultTruth, block: number): LpFigures {
    const collected = new Map<Address, bigint>();
    for (const t of [v.token0, v.token1])
      plus(collected, t, (v.collectedRaw.get(t) ?? 0n) - (v.burnedRaw.get(t) ?? 0n));
    let holdUsd = 0n;
    for (const [t, x] of v.basket) holdUsd += usd(t, x) / ONE;
    return {
      block,
      earned: record(v.valued),
      collected: record(collected),
      uncollected: record(v.owed),
      earnedUsd: v.earnedUsd,
      openMs: v.openMs,
      inRangeMs: v.inRangeMs,
      ranges: Object.fromEntries([...v.rangeTimes].map(([id, t]) => [id, { ...t }])),
      open: v.held
        .filter((h) => h.liquidity > 0n)
        .map((h) => h.id)
        .sort(),
      holdUsd,
      flowsIn: record(v.flowsIn),
      flowsOut: record(v.flowsOut),
      swaps: v.swaps,
      swapCostUsd: v.swapCostUsd,
      swapFeesUsd: v.swapFeesUsd,
    };
  }

  const vaultOf = (vault: Address) => {
    const v = vaults.get(lower(vault));
    if (!v) throw new Error(`vault ${vault} was never created by factory ${factory} (walked to ${walked})`);
    return v;
  };

  return {
    client,
    async advance(to) {
      if (to <= planned) return;
      const from = planned + 1;
      const byBlock = new Map<number, Log[]>();
      for (const l of await client.getLogs({ fromBlock: BigInt(from), toBlock: BigInt(to) })) {
        const b = Number(l.blockNumber);
        byBlock.set(b, [...(byBlock.get(b) ?? []), l]);
      }
      const plans = await plan(byBlock, from, to);
      // the reads of several blocks at once (they do not depend on each other), then the walk in order
      const done: Read[] = new Array(plans.length);
      let next = 0;
      const worker = async () => {
        while (next < plans.length) {
          const i = next++;
          done[i] = await read(plans[i]!);
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      for (const [i, p] of plans.entries()) await walk(p, done[i]!, byBlock.get(p.block) ?? []);
    },
    at(vault, block) {
      if (block > walked) throw new Error(`block ${block} not walked yet (at ${walked})`);
      const h = vaultOf(vault).history;
      for (let i = h.length - 1; i >= 0; i--) if (h[i]!.block <= block) return h[i]!;
      throw new Error(`vault ${vault} did not exist at block ${block}`);
    },
    earnedMovedAt: (vault, block) => vaultOf(vault).earnedMoved.filter((b) => b <= block),
    scaledWithdrawals: (vault) => vaultOf(vault).scaled,
    decimals(token) {
      const d = decimals.get(lower(token));
      if (d === undefined) throw new Error(`no decimals known for ${token}`);
      return d;
    },
  };
}
