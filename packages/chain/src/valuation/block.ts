import { vaultLensAbi, vaultLensRuntime } from '@vault-yield/contracts';
import {
  feeGrowthInside,
  type Holdings,
  owedTokens,
  type PoolContext,
  type TokenContext,
  type ValuationContext,
} from '@vault-yield/domain';
import {
  type Address,
  BaseError,
  decodeErrorResult,
  type Hash,
  type Hex,
  HttpRequestError,
  LimitExceededRpcError,
  parseAbi,
  TimeoutError,
} from 'viem';
import { type ChainClient, headGuardOf } from '../client/index.js';
import { LENS_TICK_BIAS, type LensArgs, lensDeployData, lensReadData } from './calldata.js';
import { priceOfAnswer } from './decimal.js';
import { BlockValuationError } from './errors.js';
import { Words } from './words.js';

/**
 * The chain's truth for many vaults at one block: balances, live positions with what the pool
 * owes them (the pool's own fee-growth formula), pending rewards, feed prices with their age,
 * pool slot0 — read by VaultLens (packages/contracts/solidity/VaultLens.sol), never deployed: it
 * runs in an eth_call at the block and returns every value as one word array. Inputs that are
 * chain state themselves (a token's feed, a vault's live ranges) are read in the same EVM frame,
 * so the result never depends on what was seen before. Measured on the bench chain (500 vaults ×
 * 3 blocks): 0.36 s and 0.21 anvil CPU-s, against 7.6 s and 2.4 CPU-s for the same reads as
 * Multicall3 sub-calls, most of which was ABI coding of ≈ 8 sub-calls per vault.
 *
 * A call at a past block costs the node far more than the work in it (anvil: 2–3 ms of CPU per
 * historical eth_call, 0.2 ms at the head), so the lens answers for as many vaults per call as it
 * may: with its runtime code set at LENS_ADDRESS by a state override (geth, erigon, nethermind,
 * reth, anvil and the large providers take the override set, eth_call's third parameter) the answer
 * is bounded only by gas (`maxOverrideBytes`); a node without overrides gets the creation code,
 * whose answer EIP-170 bounds to 24 KiB (≈ 26 vaults a call instead of ≈ 480).
 */

const factoryAbi = parseAbi(['function venueOf(address) view returns (string)']);
const feedAbi = parseAbi(['function decimals() view returns (uint8)']);
const poolAbi = parseAbi([
  'function fee() view returns (uint24)',
  'function token0() view returns (address)',
  'function token1() view returns (address)',
]);
const tokenMetaAbi = parseAbi([
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
]);

/** The addresses a vault is valued with (its immutables). */
export interface ValuedVault {
  vault: Address;
  token0: Address;
  token1: Address;
  rewardToken: Address;
  pool: Address;
  /**
   * Ranges [tickLower, tickUpper] of the vault's pool where liquidity was minted for the vault by
   * someone else (it holds them on chain but does not list them): read at every block besides its
   * live positions. A range that is live, or where the pool holds nothing for the vault at the
   * block, adds nothing — so a list that also names ranges of later blocks values the same.
   */
  ranges?: readonly (readonly [number, number])[];
}

export interface BlockValuatorConfig {
  /** The VaultFactory: feedOf(token) and venueOf(pool) registries. */
  factory: Address;
  /** Heartbeat (seconds) of a feed: older than this its price is stale. */
  heartbeatOf: (feed: Address) => number;
  /**
   * How the lens runs: `override` (runtime code by a state override), `create` (creation code, no
   * `to`), or `auto` (default): override when the node honours a probe override at the first read,
   * and creation code from the first override it answers with nothing (a fleet mixing nodes).
   */
  lens?: LensMode | 'auto';
  /** Told once how `auto` settled (for the log). */
  onMode?: (mode: LensMode) => void;
  /**
   * Largest answer of one lens call in `create` mode: the node returns it as created code, which
   * EIP-170 bounds (24,576 bytes). Vaults are batched to stay under it; a batch that still
   * overflows is halved.
   */
  maxReturnBytes?: number;
  /**
   * Largest answer of one lens call in `override` mode (default 262,144 bytes, ≈ 480 vaults of
   * one position, ≈ 24M gas: under geth's 50M eth_call gas cap). A batch that runs out of gas is halved.
   */
  maxOverrideBytes?: number;
  /** Lens calls of one read in flight at once (default 4). */
  callsInFlight?: number;
}

export interface BlockValuator {
  /**
   * Contexts by vault (lowercase), each the vault's state after `block`. With `blockHash` the
   * reads name the block by hash (EIP-1898): a node without that block refuses them ('behind')
   * instead of answering from another one.
   */
  read(
    block: number,
    vaults: readonly ValuedVault[],
    blockHash?: Hash,
    /**
     * The block's time (Unix seconds): an answer with a feed updated after it is of a later state
     * and is read again (HeadGuard's `suspect`).
     */
    blockTimestamp?: number,
  ): Promise<Map<Address, ValuationContext>>;
  /** eth_calls made so far (each one lens call). */
  readonly calls: number;
  /** How the lens runs (known after the first read when configured `auto`). */
  readonly mode: LensMode | undefined;
}

/** How VaultLens runs in an eth_call (see createBlockValuator). */
export type LensMode = 'override' | 'create';

/** Where the lens' runtime code is set by the override: no account of any chain (no key known). */
export const LENS_ADDRESS = '0x00000000000000000000000000000000004c454e' as const;
/** Runtime code of the override probe: returns the word 1 (PUSH1 1 PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN). */
const PROBE_CODE = '0x600160005260206000f3' as const;
const PROBE_ANSWER = `0x${'1'.padStart(64, '0')}`;

const lower = (a: string) => a.toLowerCase() as Address;
/** Where a read is made: the block by hash (EIP-1898) or by number. */
type At = { blockHash: Hash } | { blockNumber: bigint };
const WORD_BYTES = 32;
/** Words per vault before its positions, and per position (see VaultLens.sol). */
const VAULT_WORDS = 5;
const POSITION_WORDS = 12;

/** The revert data of a failed call: a hex string, '0x' for a revert without data, else undefined. */
function revertData(err: unknown): Hex | undefined {
  if (!(err instanceof BaseError)) return undefined;
  const found = err.walk((e) => typeof (e as { data?: unknown }).data === 'string') as { data?: Hex } | null;
  if (found?.data) return found.data;
  return /execution reverted/i.test(err.message) ? '0x' : undefined;
}

/** The node never answered the request, or only "not now" (so it said nothing about what it supports). */
const unanswered = (err: unknown) =>
  err instanceof BaseError &&
  err.walk(
    (e) => e instanceof HttpRequestError || e instanceof TimeoutError || e instanceof LimitExceededRpcError,
  ) !== null;

/** The token of a NoFeed revert of the lens, if that is why the call failed. */
function revertedFor(err: unknown): Address | undefined {
  const data = revertData(err);
  if (!data || data === '0x') return undefined;
  try {
    const decoded = decodeErrorResult({ abi: vaultLensAbi, data });
    return decoded.errorName === 'NoFeed' ? (decoded.args[0] as Address) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A batch too big for one call: its created code past EIP-170, or more gas than the node allows —
 * said outright, or (a sub-call starved by the 63/64 rule) as a revert without data, which the
 * lens otherwise makes only for a broken vault or pool (the halving then ends at that one vault,
 * whose error is reported).
 */
const isTooBig = (err: unknown) =>
  /CreateContractSizeLimit|max code size|code size|contract size|out of gas|gas required exceeds|OutOfGas/i.test(
    String((err as Error)?.message ?? err),
  ) || revertData(err) === '0x';

/** The lens' `extras` of a batch: per range the vault's index in the batch, then its ticks, biased. */
function extrasOf(batch: readonly ValuedVault[]): number[] {
  const out: number[] = [];
  batch.forEach((v, i) => {
    if (v.ranges) for (const [lo, up] of v.ranges) out.push(i, lo + LENS_TICK_BIAS, up + LENS_TICK_BIAS);
  });
  return out;
}

export function createBlockValuator(client: ChainClient, config: BlockValuatorConfig): BlockValuator {
  const maxWordsOf = (mode: LensMode) =>
    Math.floor(
      (mode === 'create' ? (config.maxReturnBytes ?? 24_576) : (config.maxOverrideBytes ?? 262_144)) /
        WORD_BYTES,
    );
  const inFlight = config.callsInFlight ?? 4;
  let calls = 0;
  const headGuard = headGuardOf(client);
  let mode: LensMode | undefined = config.lens === 'auto' ? undefined : config.lens;
  let probing: Promise<LensMode> | undefined;
  /**
   * Override when the node runs the probe's code at LENS_ADDRESS (at its head: any node has it);
   * create when it answers otherwise or refuses the call. A request that never got an answer
   * (transport, time-out, rate limit) settles nothing: it fails the read, to be retried.
   */
  const modeOf = (): Promise<LensMode> => {
    if (mode) return Promise.resolve(mode);
    probing ??= client
      .call({ to: LENS_ADDRESS, stateOverride: [{ address: LENS_ADDRESS, code: PROBE_CODE }] })
      .then(
        ({ data }) => (data === PROBE_ANSWER ? 'override' : 'create'),
        (err: unknown) => {
          if (unanswered(err)) {
            probing = undefined;
            throw err;
          }
          return 'create' as const;
        },
      )
      .then(settle);
    return probing;
  };
  const settle = (m: LensMode): LensMode => {
    if (mode !== m) {
      mode = m;
      config.onMode?.(m);
    }
    return m;
  };

  /** Immutable facts, read once (and at any block: they never change). */
  const tokenMeta = new Map<Address, Promise<{ symbol: string; decimals: number }>>();
  const feedDecimals = new Map<Address, Promise<number>>();
  const poolMeta = new Map<
    Address,
    Promise<{ fee: number; token0: Address; token1: Address; venue: string }>
  >();
  /** Live positions last seen per vault: only to size the batches. */
  const positionsSeen = new Map<Address, number>();

  const once = <K, V>(map: Map<K, Promise<V>>, key: K, make: () => Promise<V>): Promise<V> => {
    let p = map.get(key);
    if (!p) {
      p = make();
      p.catch(() => map.delete(key));
      map.set(key, p);
    }
    return p;
  };
  const metaOf = (token: Address, at: At) =>
    once(tokenMeta, token, async () => {
      const [symbol, decimals] = await Promise.all([
        client.readContract({ address: token, abi: tokenMetaAbi, functionName: 'symbol', ...at }),
        client.readContract({ address: token, abi: tokenMetaAbi, functionName: 'decimals', ...at }),
      ]);
      return { symbol, decimals: Number(decimals) };
    });
  const decimalsOfFeed = (feed: Address, at: At) =>
    once(feedDecimals, feed, async () =>
      Number(await client.readContract({ address: feed, abi: feedAbi, functionName: 'decimals', ...at })),
    );
  const poolOf = (pool: Address, at: At) =>
    once(poolMeta, pool, async () => {
      const [fee, token0, token1, venue] = await Promise.all([
        client.readContract({ address: pool, abi: poolAbi, functionName: 'fee', ...at }),
        client.readContract({ address: pool, abi: poolAbi, functionName: 'token0', ...at }),
        client.readContract({ address: pool, abi: poolAbi, functionName: 'token1', ...at }),
        client.readContract({
          address: config.factory,
          abi: factoryAbi,
          functionName: 'venueOf',
          args: [pool],
          ...at,
        }),
      ]);
      if (!venue) throw new BlockValuationError(`pool ${pool} has no venue in the factory's registry`);
      return { fee: Number(fee), token0: lower(token0), token1: lower(token1), venue };
    });

  const tokensOf = (v: ValuedVault): Address[] => {
    const list = [lower(v.token0), lower(v.token1)];
    if (!list.includes(lower(v.rewardToken))) list.push(lower(v.rewardToken));
    return list;
  };

  /** Batches of vaults whose answers stay under the size limit (by the positions last seen). */
  const batches = (
    vaults: readonly ValuedVault[],
    headerWords: number,
    maxWords: number,
    margin: number,
  ): ValuedVault[][] => {
    const out: ValuedVault[][] = [];
    let batch: ValuedVault[] = [];
    let words = headerWords;
    for (const v of vaults) {
      // Creation code: one position more than last seen, so a vault that just opened one still
      // fits under EIP-170. An override's bound is soft (gas): the positions last seen.
      const seen = positionsSeen.get(lower(v.vault)) ?? 0;
      const w = VAULT_WORDS + POSITION_WORDS * (Math.max(seen, v.ranges?.length ?? 0) + margin);
      if (batch.length > 0 && words + w > maxWords) {
        out.push(batch);
        batch = [];
        words = headerWords;
      }
      batch.push(v);
      words += w;
    }
    if (batch.length > 0) out.push(batch);
    return out;
  };

  /** One lens call at `block`; a batch whose answer is too big for one call is halved. */
  const lens = async (
    mode: LensMode,
    block: bigint,
    blockHash: Hash | undefined,
    tokens: readonly Address[],
    pools: readonly Address[],
    batch: readonly ValuedVault[],
  ): Promise<{ batch: readonly ValuedVault[]; words: Words }[]> => {
    const args: LensArgs = {
      factory: config.factory,
      tokens,
      pools,
      vaults: batch.map((v) => v.vault),
      vaultTokens: batch.flatMap((v) => [v.token0, v.token1, v.rewardToken]),
      vaultPools: batch.map((v) => pools.indexOf(lower(v.pool))),
      extras: extrasOf(batch),
    };
    const at: At = blockHash ? { blockHash } : { blockNumber: block };
    calls++;
    try {
      const { data: answer } =
        mode === 'override'
          ? await client.call({
              to: LENS_ADDRESS,
              data: lensReadData(args),
              stateOverride: [{ address: LENS_ADDRESS, code: vaultLensRuntime }],
              ...at,
            })
          : await client.call({ data: lensDeployData(args), ...at });
      // The lens always answers its tokens' and pools' words: nothing at all means the node ran no
      // code at LENS_ADDRESS — it ignored this override (a fleet behind one URL may mix nodes
      // that take overrides and nodes that do not). Creation code from now on, unless told
      // to use overrides only.
      if (mode === 'override' && (answer ?? '0x') === '0x') {
        if (config.lens === 'override')
          throw new BlockValuationError(
            `the node ignored the lens' state override at block ${block} (lens configured override only)`,
          );
        return lens(settle('create'), block, blockHash, tokens, pools, batch);
      }
      return [{ batch, words: new Words(answer ?? '0x') }];
    } catch (err) {
      if (batch.length > 1 && isTooBig(err)) {
        const half = Math.ceil(batch.length / 2);
        const [a, b] = await Promise.all([
          lens(mode, block, blockHash, tokens, pools, batch.slice(0, half)),
          lens(mode, block, blockHash, tokens, pools, batch.slice(half)),
        ]);
        return [...a, ...b];
      }
      const noFeed = revertedFor(err);
      throw new BlockValuationError(
        noFeed
          ? `no USD feed registered for token ${lower(noFeed)} at block ${block}`
          : `reading ${batch.length} vaults at block ${block} failed: ${String((err as Error)?.message ?? err).split('\n')[0]}`,
        { cause: err },
      );
    }
  };

  const read = async (
    blockNumber: number,
    vaults: readonly ValuedVault[],
    blockHash?: Hash,
    blockTimestamp?: number,
  ): Promise<Map<Address, ValuationContext>> => {
    const block = BigInt(blockNumber);
    // Constants are read once, at the block that first needs them: a node lagging behind the head
    // may not have a pool created a moment ago at `latest`, but has it at this (named) block.
    const at: At = blockHash ? { blockHash } : { blockNumber: block };
    const tokens = [...new Set(vaults.flatMap(tokensOf))].sort();
    const pools = [...new Set(vaults.map((v) => lower(v.pool)))].sort();
    const [metas, poolMetas] = await Promise.all([
      Promise.all(tokens.map((t) => metaOf(t, at))),
      Promise.all(pools.map((p) => poolOf(p, at))),
    ]);
    const lensMode = await modeOf();
    // Every batch repeats the tokens and pools (cheap): each answer stands on its own.
    const jobs = batches(
      vaults,
      tokens.length * 3 + pools.length * 4,
      maxWordsOf(lensMode),
      lensMode === 'create' ? 1 : 0,
    );
    const answersAt = async () => {
      const answers: { batch: readonly ValuedVault[]; words: Words }[][] = new Array(jobs.length);
      let next = 0;
      const worker = async () => {
        while (next < jobs.length) {
          const i = next++;
          answers[i] = await lens(lensMode, block, blockHash, tokens, pools, jobs[i]!);
        }
      };
      await Promise.all(Array.from({ length: Math.min(inFlight, jobs.length) }, worker));
      return answers;
    };
    /** The contexts of one set of answers. */
    const decode = async (answers: { batch: readonly ValuedVault[]; words: Words }[][]) => {
      const out = new Map<Address, ValuationContext>();
      let tokenCtx: Map<Address, TokenContext> | undefined;
      /** A pool's context and its global fee growth (which the context does not carry). */
      let poolCtx: Map<Address, { context: PoolContext; g0: bigint; g1: bigint }> | undefined;
      for (const { batch, words } of answers.flat()) {
        // Tokens and pools: the first answer's (every answer is of the same block).
        const rounds = tokens.map(() => ({
          feed: words.address(),
          answer: words.signed(),
          updatedAt: words.next(),
        }));
        const slots = pools.map(() => ({
          sqrtPriceX96: words.next(),
          tick: words.int(),
          g0: words.next(),
          g1: words.next(),
        }));
        if (!tokenCtx) {
          const feedDecs = await Promise.all(rounds.map((r) => decimalsOfFeed(lower(r.feed), at)));
          tokenCtx = new Map();
          for (const [i, t] of tokens.entries()) {
            const r = rounds[i]!;
            const feed = lower(r.feed);
            tokenCtx.set(t, {
              address: t,
              symbol: metas[i]!.symbol,
              decimals: metas[i]!.decimals,
              priceUsd: priceOfAnswer(r.answer, feedDecs[i]!),
              feed,
              priceUpdatedAt: Number(r.updatedAt),
              heartbeat: config.heartbeatOf(feed),
            });
          }
          poolCtx = new Map();
          for (const [i, p] of pools.entries()) {
            const m = poolMetas[i]!;
            const s = slots[i]!;
            poolCtx.set(p, {
              context: {
                address: p,
                venue: m.venue,
                feeTier: m.fee,
                sqrtPriceX96: s.sqrtPriceX96.toString(),
                tick: s.tick,
                token0: m.token0,
                token1: m.token1,
              },
              g0: s.g0,
              g1: s.g1,
            });
          }
        }
        for (const v of batch) {
          const vault = lower(v.vault);
          const { context: pool, g0, g1 } = poolCtx!.get(lower(v.pool))!;
          const balances = [words.next(), words.next(), words.next()];
          const pending = words.next();
          const n = Number(words.next());
          const holdings: Holdings = { balances: [], positions: [], pendingRewards: [] };
          // The lens reads token0, token1, rewardToken; the context lists each token once.
          const given = [lower(v.token0), lower(v.token1), lower(v.rewardToken)];
          for (const t of tokensOf(v)) {
            const amount = balances[given.indexOf(t)]!;
            if (amount > 0n) holdings.balances.push({ token: t, amount: amount.toString() });
          }
          if (pending > 0n)
            holdings.pendingRewards.push({ token: lower(v.rewardToken), amount: pending.toString() });
          for (let p = 0; p < n; p++) {
            const id = words.next();
            const tickLower = words.int();
            const tickUpper = words.int();
            const liquidity = words.next();
            const last0 = words.next();
            const last1 = words.next();
            const owed0 = words.next();
            const owed1 = words.next();
            const lo = { feeGrowthOutside0X128: words.next(), feeGrowthOutside1X128: words.next() };
            const up = { feeGrowthOutside0X128: words.next(), feeGrowthOutside1X128: words.next() };
            const [in0, in1] = feeGrowthInside(pool.tick, tickLower, tickUpper, lo, up, g0, g1);
            const [o0, o1] = owedTokens(
              {
                liquidity,
                feeGrowthInside0LastX128: last0,
                feeGrowthInside1LastX128: last1,
                tokensOwed0: owed0,
                tokensOwed1: owed1,
              },
              in0,
              in1,
            );
            holdings.positions.push({
              id: id.toString(),
              pool: pool.address,
              tickLower,
              tickUpper,
              liquidity: liquidity.toString(),
              owed0: o0.toString(),
              owed1: o1.toString(),
            });
          }
          positionsSeen.set(vault, n);
          // A copy per vault, as before (the rest pattern that left out g0, g1 cost ten times more).
          out.set(vault, {
            tokens: tokensOf(v).map((t) => tokenCtx!.get(t)!),
            pools: [{ ...pool }],
            holdings,
          });
        }
        if (!words.done)
          throw new BlockValuationError(`the lens answered more words than it owes at block ${block}`);
      }
      return out;
    };
    // A read of the newest block is made again if the next block was mined while it ran (a node
    // may have answered it from the next block's state: HeadGuard), or if a feed's answer is
    // newer than the block (`blockTimestamp`): no read of the block can show that.
    return headGuard.at(
      block,
      async () => decode(await answersAt()),
      blockTimestamp === undefined
        ? undefined
        : (out) => {
            for (const ctx of out.values())
              for (const t of ctx.tokens) if (t.priceUpdatedAt > blockTimestamp) return true;
            return false;
          },
    );
  };

  return {
    read,
    get calls() {
      return calls;
    },
    get mode() {
      return mode;
    },
  };
}
