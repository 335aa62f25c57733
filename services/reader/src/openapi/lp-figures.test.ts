import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { description } from './description.js';
import { lpFigures, lpFiguresDoc } from './lp-figures.js';

const REGENERATE = 'regenerate: npm run docs:read-interface';

describe('docs/lp-figures.md', () => {
  it('is the OpenAPI description’s LP figures section, as served', () => {
    const file = readFileSync(
      fileURLToPath(new URL('../../../../docs/lp-figures.md', import.meta.url)),
      'utf8',
    );
    expect(file, REGENERATE).toBe(lpFiguresDoc());
    expect(description).toContain(`## LP figures\n${lpFigures}\n\n## `);
  });

  it('defines every figure the snapshot’s lp, the equity points and the strategies’ lp serve', () => {
    for (const field of [
      'hold.valueUsd',
      'hold.leadUsd',
      'holdValueUsd',
      'earnedUsd',
      'uncollectedUsd',
      'apr',
      'claimedUsd',
      'pendingUsd',
      'tradingFeesUsd',
      'rewardsUsd',
      'performanceFeesUsd',
      'lossesUsd',
      'priceUsd',
      'realisedUsd',
      'unrealisedUsd',
      'openMs',
      'inRangeMs',
      'share',
      'count',
      'max',
      'current',
      'held',
      'pnl',
      // per strategy (/v1/strategies[].lp)
      'feeApr',
      'rewardApr',
      'timeInRange',
      'rebalancesPerWeek',
      'divergenceApr',
      'maxDrawdown',
    ])
      expect(lpFigures, field).toContain(`\`${field}\``);
  });
});
