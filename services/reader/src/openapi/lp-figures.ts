/**
 * The LP figures' definitions (issue #46): formula, unit and edge cases of each figure of the
 * snapshot's `lp`, of positions' `timeInRange` and of equity points' `holdValueUsd`, as
 * packages/domain computes them (fold/lp.ts, mapping/lp.ts). One text, served twice: a section of
 * the OpenAPI description (description.ts) and docs/lp-figures.md (lpFiguresDoc; a test fails
 * when the file differs).
 */
export const lpFigures = `
What LP dashboards show beside value and net — the vault against holding, fees earned, divergence
loss, time in range, rebalances, drawdown, PnL in token terms — served in the snapshot's additive
\`lp\` object, each position's \`timeInRange\` and each equity point's \`holdValueUsd\` — and per
strategy, over its member vaults, in each \`/v1/strategies\` entry's \`lp\`. Every figure is a
function of the log alone: the same under any batch cut, block grouping or rebuild.

**Units.** Fields ending in \`Usd\`: US dollars, JSON numbers rounded to 6 decimals. \`apr\`,
\`share\` and \`drawdown\`: fractions (0.12 = 12 %), 6 decimals. \`…Ms\`: block time in
milliseconds. Token amounts (\`tokens[]\`): whole tokens (raw / 10^decimals) as exact decimal
strings. Like every snapshot figure, all are the vault **at the end of block \`blockNumber\`**;
figures over time advance only at the vault's block ends (its own records and marks): the time
after its last block end counts from its next one.

**Valued when earned.** Fees, rewards and claims are valued at the prices of the block end where
they first appear (never re-valued at today's prices); a token that never had a valid price is
left out of every USD figure until its first valid price, and valued at that price then (never
at 0). Amounts in token terms are exact and count at once.

**Before fold version 5.** These figures cannot be known from the middle of a vault's history: a
projection folded before fold version 5 serves \`lp: null\` and \`timeInRange: null\` (absent from
snapshots written before) and \`holdValueUsd: null\` on its equity points — also on what it folds
after the upgrade — until \`vault-yield rebuild\` re-folds the log.

### Versus holding: \`lp.hold\`, equity \`holdValueUsd\`
- \`hold.valueUsd\` = Σ over tokens of H_token × price: the **benchmark basket** H at the
  snapshot's prices. H starts empty; every capital inflow (a deposit, tokens or liquidity received,
  an unexplained inflow) adds its tokens; a withdrawal of value W from value V (just before it)
  scales every token of H by (1 − W / V). Performance fees charged and unexplained outflows
  (losses) do not shrink it: holding would not have paid them. It is the basket behind
  \`marketDeltaUsd\` (which is H's price moves).
- \`hold.leadUsd\` = \`valueUsd\` − \`hold.valueUsd\`: what the vault made beyond holding (negative:
  holding would have done better), after performance fees.
- Equity \`holdValueUsd\`: H at each point's block end, the vs-holding line of the chart. A point
  is written where value, flows, the holding value (at 6 decimals) or the strategy changed;
  downsampling keeps it with its point, so a window's first and last points carry theirs.
- Edge cases: a vault with no capital in has 0; a flow of a token that never had a valid price
  joins H (or scales it) at the token's first valid price, as it joins capital in and out.

### Trading fees: \`lp.tradingFees\`
- \`earnedUsd\` = Σ over the vault's block ends of the new fees earned there × that block's prices,
  where fees earned (per token) = Σ \`fees.collected\` + what the pools owe the live positions
  (tokensOwed plus fees accrued since each position's last update, the pool's fee-growth formula).
  An amount that falls without a collect (owed paid out otherwise) is valued back at that block's
  prices.
- \`uncollectedUsd\` = what the pools owe now, at the snapshot's prices (the snapshot's
  \`uncollectedFeesUsd\`).
- \`apr\` = \`earnedUsd\` × 365 days / ∫ \`valueUsd\` dt: earned over **time-weighted capital**,
  simple annualisation. ∫ V dt sums, over each interval between two block ends of the vault, the
  value at the earlier end × the interval (block time). Null until the vault has been worth at
  least 1 USD at the start of intervals summing one day (86 400 000 ms), or while ∫ V dt is 0.
  The capital is the whole vault's (idle balances too), so this is the fee income of the capital
  put in, apart from the price part of the return.
- \`tokens[]\` (by address): \`earned\` = \`collected\` + \`uncollected\`; \`collected\` = Σ
  \`fees.collected\`; \`uncollected\` = owed by the pools now.

### Rewards: \`lp.rewards\`
- \`earnedUsd\`: as trading fees, of rewards earned = Σ \`rewards.claimed\` + pending rewards,
  each part valued at the block end where it first appears (a claim moves pending to claimed:
  nothing new is earned).
- \`claimedUsd\` = Σ claims, each at its block's prices; \`pendingUsd\` = pending now at the
  snapshot's prices (the snapshot's \`pendingRewardsUsd\`).
- \`apr\`: as \`tradingFees.apr\`, of \`rewards.earnedUsd\`. \`tokens[]\`: \`claimed\`, \`pending\`
  per reward token.

### Attribution: \`lp.attribution\`
\`netUsd\` split by where it came from, each part rounded to micro-dollars first so the five add up
to \`netUsd\` **exactly** (in micro-dollars): \`tradingFeesUsd\` = \`tradingFees.earnedUsd\`;
\`rewardsUsd\` = \`rewards.earnedUsd\`; \`performanceFeesUsd\` = − \`fees.taxedUsd\`;
\`lossesUsd\` = − \`fees.unexplainedOutUsd\`; \`priceUsd\` = \`netUsd\` − the four: price moves of
what the vault held (market and divergence) after it was earned or put in — fees and rewards held
since they were earned move with prices here, not in their own lines.

### Divergence (impermanent) loss: \`lp.divergence\`
Each position keeps a basket: the tokens the vault put into it (\`position.opened\` amounts, plus
each increase's, plus liquidity received into it) and the liquidity they bought.
- \`realisedUsd\` = Σ at each decrease, rebalance and close: what came out of the position (the
  record's amounts) − the share of its basket that left (the liquidity removed / the liquidity,
  all of it on a rebalance or a close), both at that block's prices. A rebalance starts a new
  basket of what went in. A position the chain no longer holds with no record closing it realises
  its basket at nothing (− its value).
- \`unrealisedUsd\` = Σ over live positions: their tokens now at the pool price (no fees) − their
  basket, both at the snapshot's prices.
- \`usd\` = \`realisedUsd\` + \`unrealisedUsd\`; negative is a loss. Fees are never in it (they are
  in \`tradingFees\`).

### Time in range: \`lp.timeInRange\`, \`positions[].timeInRange\`
- A position's \`openMs\` = block time it was open (liquidity > 0) since it was opened;
  \`inRangeMs\` = of it, in range (tickLower ≤ the pool's tick < tickUpper); \`share\` =
  \`inRangeMs\` / \`openMs\` (null while \`openMs\` is 0, e.g. opened in the snapshot's block). A
  rebalance keeps the position's id and its time.
- The vault's: \`openMs\` = block time with at least one open position; \`inRangeMs\` = of it,
  with **every** open position in range. It keeps the time of positions since closed.
- Each interval between two block ends of the vault counts as the earlier end stood: every range
  flip is a record of its own (a mark when prices move), so nothing flips unseen between them.

### Rebalances: \`lp.rebalances\`
\`count\` = \`position.rebalanced\` records: how often the agent moved a range. What a rebalance
realised against holding is in \`divergence.realisedUsd\`.
What rebalancing cost where the chain shows a cost — the vault's own swaps in its pool (\`swap\`
records: the agent setting the token ratio) — valued against the feeds' prices at each swap's block:
- \`swaps\` = the vault's \`swap\` records;
- \`costUsd\` = Σ (\`amountIn\` × price of \`tokenIn\` − \`amountOut\` × price of \`tokenOut\`): what
  the swaps gave up (negative when the pool paid better than the feeds);
- \`swapFeesUsd\` = Σ \`amountIn\` × feeTier / 10^6 (the pool's fee, rounded to the raw unit) × the
  price of \`tokenIn\`;
- \`priceImpactUsd\` = \`costUsd\` − \`swapFeesUsd\` (in micro-dollars, so the two add up exactly):
  the pool's price against the feeds', the trade's own impact included.
A swap is no capital flow: what it gave up is also in \`netUsd\` (in the attribution's \`priceUsd\`).
A token without a valid price yet counts 0 in these sums.

### Drawdown: \`lp.drawdown\`
Of the return index (net of flows and of the performance fee: the index behind \`liveApr\`) at
the vault's block ends: \`max\` = the largest (peak − I) / peak over every block end, peak the
highest index before it (the index starts at 1); \`current\` = (peak − I) / peak now (0 at a
peak). A vault that never held 1 USD has no return, so no drawdown.

### PnL in token terms: \`lp.tokens\`
Per token the vault ever held or moved (by address): \`held\` = idle + in positions at the pool
price + owed by the pools + pending rewards; \`in\` = put in (deposits, tokens and liquidity
received, unexplained inflows); \`out\` = taken out (withdrawals); \`pnl\` = \`held\` − \`in\` +
\`out\` (signed). Performance fees paid and unexplained outflows are not \`out\`: they show in
\`pnl\` as what the vault no longer has. A swap inside a position moves \`pnl\` from one token to
the other.

### Per strategy: \`/v1/strategies[].lp\`
The figures above over a strategy's member vaults, realised only. Each vault keeps, beside its own
figures, what it earned under each strategy it ran: every interval between two of its block ends
counts for the strategy in force at the earlier end, every event (a rebalance, a divergence
realised) for the strategy in force when it happened — a vault that switches keeps its earlier
figures with the earlier strategy, as its daily returns do. A strategy's figures are **sums over
its members' shares** (each vault as its snapshot stands: its last block end), never a mean of
vaults' figures:
- \`feeApr\` = Σ trading fees earned × 365 days / Σ ∫ \`valueUsd\` dt; \`rewardApr\` the same of
  rewards earned; \`divergenceApr\` the same of the divergence **realised** by decreases,
  rebalances and closes (open positions' unrealised divergence is not in it; negative: a loss
  against holding). As a vault's \`tradingFees.apr\`: null until the members were worth at least
  1 USD for a day of block time in all, or while Σ ∫ V dt is 0.
- \`timeInRange\` = Σ \`inRangeMs\` / Σ \`openMs\` of the members (null while none had a position
  open under the strategy).
- \`rebalancesPerWeek\` = Σ \`position.rebalanced\` records × 7 days / Σ block time the members
  were worth at least 1 USD (null before a day of it).
- \`maxDrawdown\` = the largest fall from a peak of the strategy's chained daily returns — the n
  daily returns behind \`liveApr\` and \`sigma\` (I_0 = 1, I_d = I_{d−1} × (1 + r_d), the first
  day's start a peak). Daily: a fall recovered within a day does not show (a vault's own
  \`drawdown.max\` is over every block end).
- **Null until enough history**, the rule of \`liveApr\`: every figure is null while the
  strategy's \`liveApr\` is (fewer operating days than the configured minimum, default 30); then
  each is null only where its denominator is empty. Fractions (a count per week), 6 decimals, each
  exact until that one rounding; recomputed with \`liveApr\`.
- A vault folded before fold version 5 has no LP figures: it adds nothing to the sums (its daily
  returns still count in \`liveApr\`, \`sigma\` and \`maxDrawdown\`) until \`vault-yield rebuild\`
  re-folds the log.

### \`liveApr\` and \`sigma\` beside DefiLlama's \`mu\` and \`sigma\`
The catalogue's \`liveApr\` and \`sigma\` (see Strategies) and DefiLlama's yields \`mu\` and
\`sigma\` are both over the whole history, annualised over 365 days, but differ in what they
measure and how:
- **Source.** DefiLlama derives a daily rate from each APY sample the pool reports, r = (1 +
  apy / 100)^(1/365) − 1: the quoted rate (fees \`apyBase\` + incentives \`apyReward\`), not a
  realised return. Ours are realised daily returns of the strategy's vaults: value net of flows
  and of the performance fee, so price moves and divergence are in them (the fee part alone is
  \`tradingFees.apr\` per vault).
- **Annualisation.** DefiLlama's \`mu\` = (Π(1 + r))^(365 / count) − 1, geometric (compounded);
  \`liveApr\` = (Π(1 + r_d) − 1) × 365 / n, simple. For the same daily returns, \`mu\` =
  (1 + \`liveApr\` × n / 365)^(365 / n) − 1; the two agree to first order in small returns.
- **Dispersion.** Both \`sigma\` are a sample standard deviation of daily figures × √365 — of the
  APY-implied rates there (how much the quoted rate moves), of realised daily returns here (quiet
  days count as 0), so ours is usually larger for volatile pairs.
- **Units and history.** DefiLlama's are in %; ours are fractions (× 100 to compare). DefiLlama
  computes them from its first daily sample on (\`sigma\` 0 until two); ours are null until the
  configured minimum of operating days (default 30).
- **Fees and rewards.** DefiLlama's \`apyBase\` and \`apyReward\` are a pool's quoted fee and
  reward yields (APY, compounded, in %); a strategy's \`lp.feeApr\` and \`lp.rewardApr\` are the
  yields its vaults realised (APR: simple, a fraction) on all the capital they held, idle balances
  included. Compounded daily, an APR a is an APY of (1 + a / 365)^365 − 1.
`.trim();

/**
 * docs/lp-figures.md: the definitions page for people reading the repository (the same text as the
 * OpenAPI description's "LP figures" section).
 */
export function lpFiguresDoc(): string {
  return [
    '<!-- Generated from services/reader/src/openapi/lp-figures.ts (the OpenAPI description\'s "LP figures" section): edit that file, not this one. -->',
    '# LP figures',
    '',
    lpFigures,
    '',
  ].join('\n');
}
