import { eventTopics, type LogFilter } from '@vault-yield/chain';
import { CHILD_TOPICS } from './types.js';

type Address = `0x${string}`;
type Hash = `0x${string}`;

/** An address as an indexed event topic (left-padded to 32 bytes). */
export const asTopic = (a: Address): Hash => `0x${'0'.repeat(24)}${a.slice(2)}` as Hash;

/** What a segment's log queries watch. */
export interface WatchedAddresses {
  vaults: readonly Address[];
  /** Pools (Swap) and feeds (AnswerUpdated) the valuation follows. */
  valuation: readonly Address[];
  /** Tokens the vaults hold: their transfers to a vault and from one. */
  tokens: readonly Address[];
  /** Addresses per filter at most (providers cap them). */
  limit: number;
}

/**
 * The eth_getLogs filters of a segment: vault, pool (Swap, Mint) and feed events by address while they fit
 * one filter (else vault events by topic, filtered by the caller, and pools and feeds by address);
 * and ERC-20 transfers of the vaults' tokens whose recipient is a vault (tokens sent straight to a
 * vault show in no vault event) and whose sender is one (tokens taken out with no vault event — an
 * abused approval, a compromised strategy, a token's clawback — are seen at their own block, not
 * at the vault's next record), `limit` recipients or senders per filter. A transfer from one vault
 * to another matches both: `uniqueLogs` drops the second copy.
 */
export function segmentFilters(w: WatchedAddresses): LogFilter[] {
  const { vaults, valuation, tokens, limit } = w;
  let filters: LogFilter[];
  if (vaults.length + valuation.length <= limit) {
    filters =
      vaults.length + valuation.length === 0
        ? []
        : [{ address: [...vaults, ...valuation], topic0: CHILD_TOPICS }];
  } else {
    filters = [{ topic0: eventTopics.vault }];
    if (valuation.length > 0)
      filters.push({
        address: [...valuation],
        topic0: [eventTopics.swap, eventTopics.mint, eventTopics.answerUpdated],
      });
  }
  if (tokens.length > 0) {
    for (let i = 0; i < vaults.length; i += limit) {
      const to = vaults.slice(i, i + limit).map(asTopic);
      filters.push({ address: [...tokens], topic0: [eventTopics.transfer], topic2: to });
    }
    for (let i = 0; i < vaults.length; i += limit) {
      const from = vaults.slice(i, i + limit).map(asTopic);
      filters.push({ address: [...tokens], topic0: [eventTopics.transfer], topic1: from });
    }
  }
  return filters;
}

/**
 * Logs in (block, logIndex) order with each log once: the segment's filters overlap (a transfer
 * between two vaults answers both the recipients' and the senders' filter), and a log read twice
 * would be folded twice. Two copies of one position under different block hashes are both kept
 * (a reorg between the two answers: checkConsistency refuses the range).
 */
export function uniqueLogs<
  L extends { blockNumber: bigint | null; blockHash: Hash | null; logIndex: number | null },
>(sorted: L[]): L[] {
  const same = (a: L, b: L) =>
    a.blockNumber === b.blockNumber && a.logIndex === b.logIndex && a.blockHash === b.blockHash;
  let dup = false;
  for (let i = 1; i < sorted.length && !dup; i++) dup = same(sorted[i]!, sorted[i - 1]!);
  if (!dup) return sorted;
  return sorted.filter((l, i) => i === 0 || !same(l, sorted[i - 1]!));
}
