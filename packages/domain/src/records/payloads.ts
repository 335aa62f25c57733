import { z } from 'zod';
import { address, hash32, intString, tick, uintString } from './primitives.js';

/**
 * The record vocabulary. Every chain event of the reference contracts maps to one type here;
 * `mark` and `revert` are synthesised by the indexer. Amounts are raw token units (bigint strings),
 * liquidity is the Uniswap v3 uint128, ids are decimal strings of the onchain uint256.
 *
 * Solidity events (packages/contracts) → record type:
 *   VaultFactory.VaultCreated(vault, owner, strategy, token0, token1, pool, performanceFeeBps)
 *                                                                               → vault.created
 *   Vault.Deposited(from, token, amount)                                       → deposit
 *   Vault.Withdrawn(to, token, amount)                                         → withdrawal
 *   Vault.PositionOpened(positionId, pool, tickLower, tickUpper, liquidity, amount0, amount1)
 *                                                                               → position.opened
 *   Vault.PositionResized(positionId, liquidity, amount0Delta, amount1Delta)   → position.resized
 *   Vault.PositionRebalanced(positionId, tickLower, tickUpper, liquidity, amount0Out, amount1Out,
 *                            amount0In, amount1In)                             → position.rebalanced
 *   Vault.PositionClosed(positionId, amount0, amount1)                        → position.closed
 *   Vault.FeesCollected(positionId, amount0, amount1)                         → fees.collected
 *   Vault.RewardsAccrued(rewardToken, amount)                                  → rewards.accrued
 *   Vault.RewardsClaimed(rewardToken, amount)                                  → rewards.claimed
 *   Vault.PerformanceFeeCharged(token, amount, recipient)                      → fee.charged
 *   Vault.Suspended(reason)                                                    → suspended
 *   Vault.Resumed()                                                            → resumed
 *   Vault.ExitRequested()                                                      → exit.requested
 *   Vault.ExitCompleted()                                                      → exit.completed
 *   Vault.StrategySelected(strategy)                                           → strategy.selected
 *   Vault.PerformanceFeeSet(performanceFeeBps)                                 → fee.rate.set
 *   Vault.Swapped(tokenIn, amountIn, tokenOut, amountOut)                      → swap
 *   ERC20.Transfer(from, to = the vault, value) in a transaction where the vault emitted no event
 *   (tokens sent straight to the vault)                                        → transfer.received
 *   UniswapV3Pool.Mint(sender ≠ the vault, owner = the vault, tickLower, tickUpper, amount, amount0,
 *   amount1) in the vault's pool, whatever else the transaction emits (liquidity minted for the
 *   vault by someone else; the vault's own mints have the vault as sender)      → position.received
 *   ERC20.Transfer(from = the vault, to, value) in a block where the vault has no record (tokens
 *   taken out with no vault event: the mark values the vault at that block, whose end reconciles
 *   the shortfall as a loss; a Transfer out its own event explains adds nothing)  → mark
 */

/** A performance-fee rate in basis points of the gain (2000 = 20 %). */
const feeBps = z.number().int().min(0).max(10_000);

/**
 * The rate a vault created before the chain carried one is charged at: the reference schedule
 * (20 %), what the service assumed for every vault then.
 */
export const DEFAULT_PERFORMANCE_FEE_BPS = 2000;

export const payloadSchemas = {
  'vault.created': z.object({
    owner: address,
    /** Strategy id, the bytes32 decoded as a right-padded ASCII string. */
    strategy: z.string().min(1).max(32),
    token0: address,
    token1: address,
    pool: address,
    /**
     * The vault's performance-fee rate at creation (VaultCreated carries it). Absent from records
     * of vaults created by a factory that emitted none: DEFAULT_PERFORMANCE_FEE_BPS.
     */
    performanceFeeBps: feeBps.optional(),
  }),
  deposit: z.object({ from: address, token: address, amount: uintString }),
  withdrawal: z.object({ to: address, token: address, amount: uintString }),
  'position.opened': z
    .object({
      positionId: uintString,
      pool: address,
      tickLower: tick,
      tickUpper: tick,
      liquidity: uintString,
      amount0: uintString,
      amount1: uintString,
    })
    .refine((p) => p.tickLower < p.tickUpper, 'tickLower must be below tickUpper'),
  /** New total liquidity; deltas are what moved between the vault's idle balance and the position. */
  'position.resized': z.object({
    positionId: uintString,
    liquidity: uintString,
    amount0Delta: intString,
    amount1Delta: intString,
  }),
  /** Old range withdrawn (Out, back to idle) and new range deposited (In, from idle). */
  'position.rebalanced': z
    .object({
      positionId: uintString,
      tickLower: tick,
      tickUpper: tick,
      liquidity: uintString,
      amount0Out: uintString,
      amount1Out: uintString,
      amount0In: uintString,
      amount1In: uintString,
    })
    .refine((p) => p.tickLower < p.tickUpper, 'tickLower must be below tickUpper'),
  'position.closed': z.object({ positionId: uintString, amount0: uintString, amount1: uintString }),
  'fees.collected': z.object({ positionId: uintString, amount0: uintString, amount1: uintString }),
  /** Rewards earned but not claimed: adds to pendingRewards (valued at the reward token's price). */
  'rewards.accrued': z.object({ rewardToken: address, amount: uintString }),
  /** Rewards claimed into the vault's idle balance; removes the same amount from pending. */
  'rewards.claimed': z.object({ rewardToken: address, amount: uintString }),
  /** Performance fee paid out of the vault's idle balance to the service. */
  'fee.charged': z.object({ token: address, amount: uintString, recipient: address }),
  suspended: z.object({ reason: z.string().min(1).max(500) }),
  resumed: z.object({}),
  'exit.requested': z.object({}),
  'exit.completed': z.object({}),
  'strategy.selected': z.object({ strategy: z.string().min(1).max(32) }),
  /** The vault's performance-fee rate changed: later charges settle the high-water mark at it. */
  'fee.rate.set': z.object({ performanceFeeBps: feeBps }),
  /**
   * Tokens sent straight to the vault by a plain ERC-20 transfer (no vault event in its
   * transaction explains it), at the transfer's log position: booked as capital in there, so the
   * flows of its block settle in the chain's order. What no record explains is still reconciled
   * at the block's end (`balance.reconciled`).
   */
  'transfer.received': z.object({ from: address, token: address, amount: uintString }),
  /**
   * Liquidity minted for the vault by someone else (a Uniswap v3 Mint in the vault's pool whose
   * owner is the vault and whose sender is not, even in a transaction where the vault emitted an
   * event of its own), at the Mint's log
   * position: the position is the vault's on chain — valued from then on like its own (the
   * indexer reads its range at every block) — and what it cost (`amount0`, `amount1` of the
   * pool's token0 / token1) is booked there as capital in, as tokens sent straight to it are.
   * `from` is the Mint's sender (who paid), `liquidity` the amount minted.
   */
  'position.received': z
    .object({
      from: address,
      pool: address,
      tickLower: tick,
      tickUpper: tick,
      liquidity: uintString,
      amount0: uintString,
      amount1: uintString,
    })
    .refine((p) => p.tickLower < p.tickUpper, 'tickLower must be below tickUpper'),
  /**
   * The vault swapped idle tokens in its own pool (the agent setting its token ratio): `amountIn`
   * of `tokenIn` paid, `amountOut` of `tokenOut` received, as the pool settled them. What it cost
   * (the pool's fee and the price impact, against the feeds' prices at the block) is in the LP
   * figures (`lp.rebalances`); no capital flow.
   */
  swap: z.object({ tokenIn: address, amountIn: uintString, tokenOut: address, amountOut: uintString }),
  /** Synthesised by the indexer: prices moved or a range edge was crossed; no vault activity. */
  mark: z.object({}),
  /**
   * Synthesised by the indexer after a reorg: every record of this vault at blockNumber ≥
   * fromBlock whose blockHash is in `orphanedBlockHashes` is void. The projector deletes them and
   * re-folds the vault from what remains. `fromSeq` (schema 3): the vault's first sequence number
   * in the orphaned blocks; every number below it must have been folded for the revert to apply.
   */
  revert: z.object({
    fromBlock: z.number().int().nonnegative(),
    orphanedBlockHashes: z.array(hash32).min(1),
    fromSeq: z.number().int().positive().optional(),
  }),
} as const;

export type RecordType = keyof typeof payloadSchemas;
export const recordTypes = Object.keys(payloadSchemas) as RecordType[];

/**
 * A ledger row the projector writes (never a record of the log) when the holdings read at a
 * block differ from what the vault's events explain: tokens sent straight to the vault (a plain
 * ERC-20 transfer), or gone without an event. Booked as capital in (amount > 0) or a loss
 * (amount < 0: netUsd drops, the vault is flagged `drain`), valued at the record's prices (null
 * for a token without a valid price yet). Row position: the record's block and tx hash,
 * txIndex RECONCILED_TX_INDEX (after every transaction of the block), logIndex −2.
 */
export const RECONCILED = 'balance.reconciled' as const;
export const RECONCILED_TX_INDEX = 2_147_483_647;
export const RECONCILED_LOG_INDEX = -2;
export const reconciledPayload = z.object({
  token: address,
  /** Raw token units, signed: positive = more than the events explain. */
  amount: intString,
  /**
   * USD value of |amount| at the block's price, exact decimal string; null when the token had no
   * valid price yet (valued at its first valid price in the vault's figures, never at 0).
   */
  valueUsd: z
    .string()
    .regex(/^(0|[1-9][0-9]*)(\.[0-9]+)?$/)
    .nullable(),
  /**
   * What it was booked as: capitalIn (more than the events explain), loss (less: value gone with
   * no withdrawal, in netUsd; fold version 4), capitalOut (less, on rows projected before fold
   * version 4 until a rebuild).
   */
  bookedAs: z.enum(['capitalIn', 'loss', 'capitalOut']),
});

/** Types of ledger rows, served by the events endpoint: vault activity (`mark` and `revert` are plumbing) and reconciliations. */
export type ActivityType = Exclude<RecordType, 'mark' | 'revert'> | typeof RECONCILED;
export const activityTypes: ActivityType[] = [
  ...recordTypes.filter((t): t is Exclude<RecordType, 'mark' | 'revert'> => t !== 'mark' && t !== 'revert'),
  RECONCILED,
];
/** The payload (`data`) of each ledger row type. */
export const ledgerPayloadSchemas = { ...payloadSchemas, [RECONCILED]: reconciledPayload } as const;

export type Payload<T extends RecordType> = z.output<(typeof payloadSchemas)[T]>;
