import { formatScaled } from '@vault-yield/domain';

/**
 * What a record carries for a feed's answer: the price as a decimal string, or NO_PRICE ("0")
 * when the feed answered zero or a negative value. Such an answer is no price, but the chain
 * accepted the block: the record is written, and the fold keeps the last valid price, flagged
 * (packages/domain TokenPrice.priceInvalid) — never a 0 valuation, never a refused block.
 */
export function priceOfAnswer(answer: bigint, decimals: number): string {
  return answer > 0n ? formatScaled(answer, decimals) : NO_PRICE;
}

export const NO_PRICE = '0';
