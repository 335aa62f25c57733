import type { Address, VaultState } from '../fold/state.js';
import { fixedToNumber, formatScaled, tokenValue } from '../math/fixed.js';
import type { VaultRecord } from '../records/envelope.js';

/**
 * A token amount of a ledger row as people read it: which payload field it is, the token with its
 * symbol, the amount in whole tokens (an exact decimal string, signed where the field is), and
 * what it was worth in USD at the row's block — at the price the fold valued the vault with there
 * (the record's context; a feed's non-answer is the last valid price, as everywhere).
 */
export interface LedgerAmount {
  /** The payload field holding the raw amount (e.g. `amount`, `amount0Out`). */
  field: string;
  token: Address;
  symbol: string;
  /** Whole tokens, exact: raw / 10^decimals ("1.5", "-0.000001"). */
  amount: string;
  /**
   * USD at the row's block, 6 dp; null when the token had no valid price yet there (its feed never
   * answered one): the flow is valued at the token's first valid price, in the vault's figures
   * from that block on (VaultState.unpriced) — never at 0.
   */
  valueUsd: number | null;
}

/** What the amounts are read with: the fold's state after the record (its pool tokens, token marks, pools). */
export type AmountBasis = Pick<VaultState, 'token0' | 'token1' | 'tokens' | 'pools'>;

type Field = readonly [field: string, token: Address];

/** Raw units as whole tokens, exact and signed, trailing zeros trimmed. */
export function wholeTokens(raw: bigint, decimals: number): string {
  return formatScaled(raw, decimals);
}

/** Which payload fields of a record type hold token amounts, and of which token. */
function fieldsOf(r: VaultRecord, s: AmountBasis): Field[] {
  const p = r.payload as Record<string, unknown>;
  const t0 = s.token0;
  const t1 = s.token1;
  switch (r.type) {
    case 'deposit':
    case 'withdrawal':
    case 'fee.charged':
    case 'transfer.received':
      return [['amount', p.token as Address]];
    case 'rewards.accrued':
    case 'rewards.claimed':
      return [['amount', p.rewardToken as Address]];
    case 'position.opened':
    case 'position.closed':
    case 'fees.collected':
    case 'position.received': {
      // A position in another pool (position.received names its own): that pool's tokens.
      const other =
        typeof p.pool === 'string' ? r.context.pools.find((x) => x.address === p.pool) : undefined;
      return [
        ['amount0', other?.token0 ?? t0],
        ['amount1', other?.token1 ?? t1],
      ];
    }
    case 'position.resized':
      return [
        ['amount0Delta', t0],
        ['amount1Delta', t1],
      ];
    case 'position.rebalanced':
      return [
        ['amount0Out', t0],
        ['amount1Out', t1],
        ['amount0In', t0],
        ['amount1In', t1],
      ];
    case 'swap':
      return [
        ['amountIn', p.tokenIn as Address],
        ['amountOut', p.tokenOut as Address],
      ];
    default:
      return [];
  }
}

/** One amount of `token` (raw units) read with the state's symbol, decimals and price; null when it lacks the token. */
export function ledgerAmount(
  s: Pick<AmountBasis, 'tokens'>,
  field: string,
  token: Address,
  raw: bigint,
): LedgerAmount | null {
  const t = s.tokens[token];
  if (!t) return null;
  return {
    field,
    token,
    symbol: t.symbol,
    amount: wholeTokens(raw, t.decimals),
    valueUsd: t.price === 0n ? null : fixedToNumber(tokenValue(raw, t.decimals, t.price)),
  };
}

/**
 * The token amounts of a record's ledger row, in payload order (none for a type without any),
 * read with the fold's state after it. A pure function of the log: a rebuild writes the same.
 */
export function ledgerAmounts(r: VaultRecord, s: AmountBasis): LedgerAmount[] {
  const out: LedgerAmount[] = [];
  const p = r.payload as Record<string, unknown>;
  for (const [field, token] of fieldsOf(r, s)) {
    const raw = p[field];
    if (typeof raw !== 'string') continue;
    const a = ledgerAmount(s, field, token, BigInt(raw));
    if (a) out.push(a);
  }
  return out;
}
