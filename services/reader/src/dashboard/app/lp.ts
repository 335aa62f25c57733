/// <reference lib="dom" />
import type { Snapshot, TimeInRange } from '@vault-yield/client';
import { duration, fill, h, pct, sign, tokens, usd, usdSigned } from './dom.js';

/**
 * The LP figures panel (issue #46): the vault against holding, where its net came from (trading
 * fees, rewards, performance fees, losses, price), fee and reward APR, divergence, time in range,
 * rebalances, drawdown and PnL in token terms — all read from the snapshot's `lp` as served. A
 * vault folded before fold version 5 has `lp` null (or absent): the panel says so, nothing else.
 */

/** "87.50%", or "—" with no share yet. */
export const shareText = (t: TimeInRange | null): string => (t?.share == null ? '—' : pct(t.share));

/** A share of block time with what it is a share of, for people ("of 2 d 3 h open"). */
export const openText = (t: TimeInRange | null): string =>
  t === null ? 'no LP figures' : t.openMs > 0 ? `of ${duration(t.openMs)} open` : 'never open';

interface StatOpts {
  cls?: string;
  /** A line under the figure. */
  sub?: string;
  title?: string;
}

const stat = (label: string, value: string, testid: string, { cls = '', sub = '', title }: StatOpts = {}) =>
  h(
    'div',
    { class: 'stat', 'data-testid': testid, title },
    h('span', {}, label),
    h('strong', { class: cls }, value),
    sub ? h('small', {}, sub) : null,
  );

const aprText = (apr: number | null) => (apr === null ? '—' : pct(apr));
/** What an APR is, and why it may be "—" (the fold's rule: a day of block time worth at least 1 USD). */
const APR_TITLE =
  'annualised on time-weighted capital (earned ÷ ∫ value dt × 365 days); none until the vault has been worth at least 1 USD for a day of block time';

/** The five parts of the attribution, in the order they add up to net. */
const PARTS = [
  ['tradingFees', 'Trading fees', 'tradingFeesUsd'],
  ['rewards', 'Rewards', 'rewardsUsd'],
  ['performanceFees', 'Performance fees', 'performanceFeesUsd'],
  ['losses', 'Losses (drains)', 'lossesUsd'],
  ['price', 'Price (market and divergence)', 'priceUsd'],
] as const;

export function renderLp(s: Snapshot): void {
  const lp = s.lp ?? null;
  if (lp === null) {
    fill(
      'lp',
      h(
        'p',
        { class: 'empty', 'data-testid': 'lp-missing' },
        'No LP figures for this vault: its projection was folded before fold version 5. ',
        h('code', { class: 'nowrap' }, 'vault-yield rebuild'),
        ' re-folds the log with them.',
      ),
    );
    return;
  }
  const a = lp.attribution;
  const largest = Math.max(...PARTS.map(([, , k]) => Math.abs(a[k])), Math.abs(s.netUsd)) || 1;
  // A bar from the middle: gains to the right, losses to the left, scaled to the largest part.
  const bar = (x: number) =>
    h(
      'div',
      { class: 'attr-bar', 'aria-hidden': 'true' },
      x !== 0 ? h('i', { class: sign(x), style: `width:${(50 * Math.abs(x)) / largest}%` }) : null,
    );
  const feesByToken = new Map(lp.tradingFees.tokens.map((t) => [t.token, t.earned]));
  fill(
    'lp',
    h(
      'div',
      { class: 'stats' },
      stat('Holding instead', usd(lp.hold.valueUsd), 'lp-hold', {
        sub: 'the tokens put in, held',
        title: 'the tokens put in (each flow at its place), valued at the snapshot’s prices',
      }),
      stat('Lead over holding', usdSigned(lp.hold.leadUsd), 'lp-lead', {
        cls: sign(lp.hold.leadUsd),
        sub: 'value − holding',
      }),
      stat('Trading fees earned', usd(lp.tradingFees.earnedUsd), 'lp-fees-earned', {
        sub: `uncollected ${usd(lp.tradingFees.uncollectedUsd)}`,
        title: 'collected + owed by the pools, each part at the price when earned',
      }),
      stat('Fee APR', aprText(lp.tradingFees.apr), 'lp-fee-apr', { title: APR_TITLE }),
      stat('Rewards earned', usd(lp.rewards.earnedUsd), 'lp-rewards-earned', {
        sub: `claimed ${usd(lp.rewards.claimedUsd)} · pending ${usd(lp.rewards.pendingUsd)}`,
      }),
      stat('Reward APR', aprText(lp.rewards.apr), 'lp-reward-apr', { title: APR_TITLE }),
      stat('Divergence', usdSigned(lp.divergence.usd), 'lp-divergence', {
        cls: sign(lp.divergence.usd),
        sub: `realised ${usdSigned(lp.divergence.realisedUsd)} · unrealised ${usdSigned(lp.divergence.unrealisedUsd)}`,
        title: 'the positions’ value without fees against holding what went into them',
      }),
      stat('Time in range', shareText(lp.timeInRange), 'lp-time-in-range', {
        sub: openText(lp.timeInRange),
        title: 'block time with every open position in range, of the time with at least one open',
      }),
      stat('Rebalances', String(lp.rebalances.count), 'lp-rebalances'),
      stat('Swap cost', usd(lp.rebalances.costUsd), 'lp-swap-cost', {
        cls: lp.rebalances.costUsd > 0 ? 'neg' : '',
        sub: `${lp.rebalances.swaps} swaps · pool fees ${usd(lp.rebalances.swapFeesUsd)} · impact ${usdSigned(lp.rebalances.priceImpactUsd)}`,
        title: 'what the vault’s own swaps gave up at the feeds’ prices: the pool’s fee and the price impact',
      }),
      stat('Max drawdown', pct(lp.drawdown.max), 'lp-drawdown-max', {
        cls: lp.drawdown.max > 0 ? 'neg' : '',
        sub: 'of the return index',
      }),
      stat('Current drawdown', pct(lp.drawdown.current), 'lp-drawdown-current', {
        cls: lp.drawdown.current > 0 ? 'neg' : '',
        sub: 'from its peak',
      }),
    ),
    h('h3', {}, 'Net, by where it came from'),
    h(
      'table',
      { class: 'attribution' },
      h(
        'tbody',
        {},
        ...PARTS.map(([part, label, key]) =>
          h(
            'tr',
            { 'data-testid': 'attribution', 'data-part': part },
            h('td', {}, label),
            h('td', { class: 'bar-cell' }, bar(a[key])),
            h('td', { class: `num ${sign(a[key])}` }, usdSigned(a[key])),
          ),
        ),
      ),
      h(
        'tfoot',
        {},
        h(
          'tr',
          { 'data-testid': 'attribution-net' },
          h('th', {}, 'Net'),
          h('th', { class: 'bar-cell' }, bar(s.netUsd)),
          h('th', { class: `num ${sign(s.netUsd)}` }, usdSigned(s.netUsd)),
        ),
      ),
    ),
    h('h3', {}, 'In token terms'),
    lp.tokens.length === 0
      ? h('p', { class: 'empty' }, 'No tokens yet.')
      : h(
          'div',
          { class: 'scroll' },
          h(
            'table',
            {},
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                h('th', {}, 'Token'),
                h('th', { class: 'num' }, 'Held'),
                h('th', { class: 'num' }, 'Put in'),
                h('th', { class: 'num' }, 'Taken out'),
                h('th', { class: 'num' }, 'PnL'),
                h('th', { class: 'num hide-narrow' }, 'Fees earned'),
              ),
            ),
            h(
              'tbody',
              {},
              ...lp.tokens.map((t) =>
                h(
                  'tr',
                  { 'data-testid': 'lp-token', 'data-token': t.token },
                  h('td', { title: t.token }, t.symbol || t.token),
                  h('td', { class: 'num', title: t.held }, tokens(t.held)),
                  h('td', { class: 'num', title: t.in }, tokens(t.in)),
                  h('td', { class: 'num', title: t.out }, tokens(t.out)),
                  h(
                    'td',
                    { class: `num ${sign(Number(t.pnl))}`, title: t.pnl },
                    `${t.pnl.startsWith('-') || /^[0.]+$/.test(t.pnl) ? '' : '+'}${tokens(t.pnl)}`,
                  ),
                  h(
                    'td',
                    { class: 'num hide-narrow', title: feesByToken.get(t.token) ?? '' },
                    feesByToken.has(t.token) ? tokens(feesByToken.get(t.token)!) : '—',
                  ),
                ),
              ),
            ),
          ),
        ),
  );
}
