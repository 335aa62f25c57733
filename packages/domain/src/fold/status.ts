import { isInRange } from '../math/price.js';
import type { VaultStatus } from '../views/index.js';
import { type Position, positionList, type VaultState } from './state.js';

/**
 * Vault status, derived from the folded state (never stored, so it cannot drift from it).
 * First match wins:
 *
 * | status    | condition                                                                      |
 * |-----------|--------------------------------------------------------------------------------|
 * | suspended | `suspension` non-null (a `suspended` record not yet followed by `resumed`)      |
 * | exiting   | an `exit.requested` not yet followed by `exit.completed`; or an exit completed  |
 * |           | (`exited`) and something of value (≥ DUST_USD) is still left to hand back:      |
 * |           | unclaimed rewards, fees owed on a closed position, a balance                    |
 * | attention | drained: an outflow no vault event explains (a loss, `drain`) since the owner   |
 * |           | last acted (deposit, withdrawal, exit request) — whatever is left, even nothing |
 * | idle      | no capital: valueUsd (idle balances + positions with what they are owed +       |
 * |           | pending rewards) below DUST_USD (0.01 USD): wei left by rounding, a few tokens  |
 * |           | sent by a stranger or a sub-cent reward are not capital. Pending rewards stay   |
 * |           | readable in the snapshot's `pendingRewardsUsd` whatever the status.            |
 * | aiming    | capital, but no deployed position (none open, or all open ones have liquidity 0 |
 * |           | — "pending" positions), and no exit completed since the vault was last put to   |
 * |           | work (a vault after its exit never reads aiming)                                |
 * | attention | ≥ 1 deployed position out of range (range rule: tickLower ≤ tick < tickUpper)  |
 * | earning   | every deployed position in range                                                |
 *
 * Transitions (record → new status; any record not listed keeps the status unless it changes one
 * of the conditions above, e.g. a `mark` moving the pool tick):
 *
 * | from                | record                                              | to                                 |
 * |---------------------|-----------------------------------------------------|------------------------------------|
 * | (none)              | vault.created                                       | idle                               |
 * | idle                | deposit, rewards.accrued, direct transfer, mark     | aiming once valueUsd ≥ DUST_USD    |
 * |                     | raising valueUsd to ≥ DUST_USD                      |                                    |
 * | idle                | position.opened (liquidity 0), value ≥ DUST_USD     | aiming                             |
 * | aiming              | withdrawal / fee.charged / mark leaving valueUsd    | idle                               |
 * |                     | below DUST_USD                                      |                                    |
 * | aiming              | position.opened / resized (liquidity > 0), in range | earning                            |
 * | aiming              | position.opened / resized (liquidity > 0), out      | attention                          |
 * | earning             | mark / any record moving the tick out of a range    | attention                          |
 * | earning             | position.rebalanced / opened out of range           | attention                          |
 * | any but suspended,  | an outflow no event explains (balance.reconciled,   | attention (drained)                |
 * | exiting             | bookedAs loss) at a block end                       |                                    |
 * | attention (drained) | deposit, withdrawal (derived again)                 | derived (idle/aiming/earning/attention) |
 * | attention (drained) | exit.requested                                      | exiting                            |
 * | attention           | mark moving the tick back into every range          | earning                            |
 * | attention           | position.rebalanced / closed / resized to 0 leaving | earning                            |
 * |                     | only in-range deployed positions                    |                                    |
 * | earning, attention  | last deployed position closed or resized to 0       | aiming (idle if nothing is left)   |
 * | any but suspended   | suspended                                           | suspended                          |
 * | suspended           | resumed                                             | exiting if an exit is requested,   |
 * |                     |                                                     | else derived (idle/aiming/earning/attention) |
 * | suspended           | any other record                                    | suspended                          |
 * | idle, aiming, earning, attention | exit.requested                          | exiting                            |
 * | exiting             | exit.completed, value ≥ DUST_USD left               | exiting (exited: hand back the rest) |
 * | exiting             | exit.completed, nothing of value left               | idle                               |
 * | exiting (exited)    | withdrawal / claim / collect leaving < DUST_USD     | idle                               |
 * | idle (exited)       | rewards accruing or a transfer, value ≥ DUST_USD    | exiting (something to hand back)   |
 * | exiting/idle (exited) | deposit, or position.opened (put back to work)    | derived (idle/aiming/earning/attention) |
 * | exiting             | any other record except suspended                   | exiting                            |
 *
 * Nothing is refused: the contract enforces its own transitions and the fold records what the
 * chain did (a `resumed` while not suspended, a second `exit.requested` or an `exit.completed`
 * with none requested change the flags as they say). exit.requested is accepted while suspended
 * (exits stay available); the vault shows suspended until resumed, then exiting.
 */
export function statusOf(s: VaultState): VaultStatus {
  if (s.suspension) return 'suspended';
  if (s.exitRequested) return 'exiting';
  // A drain never reads as if nothing happened (aiming, or idle once emptied).
  if (s.drain) return 'attention';
  if (!hasCapital(s)) return 'idle';
  if (s.exited) return 'exiting';
  let deployed = false;
  for (const p of positionList(s.positions)) {
    if (p.liquidity === 0n) continue;
    deployed = true;
    if (!positionInRange(s, p)) return 'attention';
  }
  return deployed ? 'earning' : 'aiming';
}

/** Below this value (0.01 USD, 10^18 fixed point) a vault holds dust, not capital. */
export const DUST_USD = 10n ** 16n;

/** Capital = a value (idle + positions + pending rewards) of at least DUST_USD. */
export function hasCapital(s: Pick<VaultState, 'valueUsd'>): boolean {
  return s.valueUsd >= DUST_USD;
}

export function positionInRange(s: Pick<VaultState, 'pools'>, p: Position): boolean {
  const pool = s.pools[p.pool];
  if (!pool) throw new Error(`invariant: pool ${p.pool} of position ${p.id} has no price`);
  return isInRange(pool.tick, p.tickLower, p.tickUpper);
}
