import type { ApplyOutcome, MarketTx } from '@vault-yield/store';
import type { Projection } from '../runner/index.js';
import type { DecodedMarket, MarketKind } from './decode.js';

/** What the market projection did with one message of a batch. */
export interface MarketApplied {
  offset: string;
  kind: MarketKind;
  outcome: ApplyOutcome;
}

/**
 * The market side as a projection the runner feeds (one per topic: screen results, strategy
 * catalogue): each decoded message replaces what is in place when it is newer; the runner keeps
 * the offsets, the gap check and the dead letters of messages that do not decode.
 */
export function createMarketProjection(): Projection<DecodedMarket, MarketApplied[], MarketTx> {
  return {
    async apply(tx, items) {
      const out: MarketApplied[] = [];
      for (const { offset, decoded } of items) {
        const outcome =
          decoded.kind === 'screen'
            ? await tx.applyScreen(decoded.value)
            : await tx.applyCatalogue(decoded.value);
        out.push({ offset, kind: decoded.kind, outcome });
      }
      return { refused: [], out };
    },
  };
}
