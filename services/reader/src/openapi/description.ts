import { activityTypes } from '@vault-yield/domain';
import { LIMITS } from '../params.js';
import { lpFigures } from './lp-figures.js';

/** The API description: every decision the seed leaves open ("not shown"), written down. */
export const description = `
Read-only HTTP API of the Vault Yield Service: vault state, equity series, activity ledger,
strategy catalogue and eligible-asset universe. Every operation is a GET (HEAD also works) that
returns JSON. Operations that create or change vaults are not part of this API.

## Versioning
All resources live under the \`/v1\` path prefix. Within v1 changes are additive only (new
endpoints, new optional query parameters, new response fields, new event types); clients must
ignore fields they do not know. A breaking change gets a new prefix (\`/v2\`) served side by side.
Operational routes (\`/health\`, \`/ready\`, \`/metrics\`, \`/openapi.json\`, \`/docs\`) are unversioned.
\`/ready\` answers 503 only when this instance cannot serve (database unreachable, schema not
migrated). Dead letters do **not** make it 503: every other vault is right and readers keep
getting 200 (taking the reader out of a load balancer would hide every vault to flag a few);
the body reports \`deadLetters\` and \`vaultsBehind\`, each affected snapshot says \`behind\`,
and the projector's \`projector_dead_letters_total{kind}\` metric counts them for alerting.

## Authentication
None: this is a public, read-only API. No credentials are accepted or needed. CORS allows the
configured dashboard origins (\`*\` by default). Operators only: \`/metrics\` answers requests
carrying the deployment's admin token (\`Authorization: Bearer <ADMIN_TOKEN>\`; 401
\`unauthorized\` otherwise, and always when no token is set), and \`/ready\` gives its details
(schema, migration, dead letters, vaults behind; the reason of a 503) with it — without it,
\`/ready\` answers its status code alone, for load balancers.

## Many chains: a vault is (chain, address)
A deployment follows several chains, and the same address may be a vault on more than one of them
(the same deployer, or CREATE2, gives the same factory and vault addresses on every chain): the
address alone never names a vault. A vault's **id** is its chain and address as a CAIP-10
account id, \`eip155:{chainId}:{address}\` (e.g. \`eip155:8453:0x5fbd…0aa3\`, the address
lowercase in responses). Every served object carries its \`chainId\` (snapshots, vault list
entries and stream events carry the \`id\` too; ledger rows and equity points the \`chainId\`).
The path parameter \`{vault}\` takes either form:
- an **id** \`eip155:{chainId}:0x…\` (any case of the hex; \`:\` may be sent as \`%3A\`): that
  vault, 404 when it does not exist;
- a **bare address** \`0x…\`: the vault at that address on whichever chain has one — **409**
  \`ambiguous_vault\` when several chains do, with \`error.candidates\` listing their ids
  (ascending chain id): ask again with one of them. 404 when no chain has it. A bare address keeps
  working for a vault on one chain, so links written before a deployment followed several chains
  still resolve until a second chain has a vault at the same address.
A malformed name (a chain id that is not a positive integer of at most 2147483647, hex of the
wrong length, anything else) is a 400. \`GET /v1/vaults?chainId=N\` keeps one chain's vaults;
\`GET /v1/chains\` lists the chains followed, each with the newest block its indexer read
(\`head\`), published (\`checkpoint\`) and the service folded (\`folded\`), and the lags
between them: a chain whose node is down shows its \`lag.seconds\` growing while the other chains
go on. A transaction hash may repeat across chains: \`GET /v1/tx/{hash}\` serves the rows of every
chain. The live streams name vaults by id (a bare address in \`GET /v1/stream?vault=\` follows
that address on every chain).

## Formats
- **Vaults** (path \`{vault}\`): a vault id \`eip155:{chainId}:0x…\` or a bare address (above).
- **Addresses** (query \`owner\`, a bare \`{vault}\`): \`0x\` followed by 40 hex digits, any case
  accepted; every address in a response is lowercase. Anything else is a 400.
- **Chain ids** (\`chainId\`): EIP-155 chain ids, positive integers (at most 2147483647).
- **Transaction hashes**: \`0x\` + 64 hex digits, any case in, lowercase out.
- **Timestamps** (\`ts\`, \`updatedAt\`, \`createdAt\`, \`suspension.since\`): integers, Unix time in
  **milliseconds** (UTC). Ledger and equity times are block times.
- **Money**: fields ending in \`Usd\` are JSON numbers in US dollars (rounded to 6 decimals).
  Ledger \`data\` amounts are raw token units as decimal strings (exact, unscaled).
- **Time query parameters** (\`since\`, \`until\`, \`from\`, \`to\`): either Unix milliseconds (a
  non-negative decimal integer, e.g. \`1735689600000\`) or ISO-8601: a date (\`2025-01-01\`, midnight
  UTC) or a date-time with an explicit offset (\`2025-01-01T12:00:00Z\`, \`…+02:00\`, optional
  fraction). A date-time without an offset is rejected (it would be ambiguous).
  Lower bounds (\`since\`, \`from\`) are **inclusive**, upper bounds (\`until\`, \`to\`) **exclusive**:
  \`[since, until)\`. When both are given the lower must be earlier than the upper, else 400.

## Query parameters
Every query parameter is validated. An **unknown query parameter is a 400** (a typo never silently
widens a query), as is an empty value (\`limit=\`), a value longer than ${LIMITS.valueLength}
characters, or a single-valued parameter given twice. Only \`type\` may repeat.

## Snapshot
\`GET /v1/vault/{vault}/snapshot\` serves the stored snapshot row as it is (one indexed read).
Rules that always hold: \`netUsd = valueUsd + capitalOutUsd − capitalInUsd\` (deposits never look
like gains); \`strategyDeltaUsd + marketDeltaUsd = netUsd\`; \`suspension\` is null unless
\`status = suspended\`, and when non-null carries \`reason\`, \`since\` and \`exitsAvailable: true\`.
Position ranges are human prices of token0 in token1 (decimals applied), never ticks.
**Flows, one meaning each.** \`capitalInUsd\` = \`fees.contributedUsd\` (Σ the owner's
deposits: \`deposit\` rows) + \`fees.receivedUsd\` (Σ tokens and liquidity received from others:
\`transfer.received\`, \`position.received\` rows) + \`fees.unexplainedInUsd\` (Σ balance increases
no vault event explains: \`balance.reconciled\` rows booked \`capitalIn\`), each valued at its
block's prices; \`capitalOutUsd\` = \`fees.withdrawnUsd\` (Σ the owner's withdrawals:
\`withdrawal\` rows) and nothing else. \`fees.unexplainedOutUsd\` = Σ balance decreases no vault
event explains (\`balance.reconciled\` rows booked \`loss\`): value gone without a withdrawal is a
**loss**, never capital out — \`netUsd\` drops by it (the identity holds exactly: the value fell,
no flow moved), the high-water mark keeps its level (the loss must be recovered before a fee is
due again), and the snapshot's additive \`drain\` (\`since\`, \`blockNumber\`, \`lostUsd\`) flags it
with status \`attention\` until the owner acts again (a deposit, a withdrawal or an exit
request). The three additive fees fields and \`drain\` are absent on snapshots projected before
fold version 4 (until a rebuild, \`contributedUsd\` there is all capital in).
Fees (performance fee with a high-water mark): \`contributedUsd\`, \`withdrawnUsd\` as above;
\`taxedUsd\` = Σ performance fees charged, each valued at
its charge block's prices; \`highWaterUsd\` = the vault value above which a performance fee is owed:
it starts at 0 and moves only on flows and charges, never with prices (a deposit of D adds D; a
withdrawal of W from value V scales it by 1 − W/V; a charge of C settles the gain S = C / rate,
at most the gain G = V − highWaterUsd above the mark, and raises the mark by S − C, what that
gain left in the vault after paying for it: a charge of the whole fee due puts the mark at the
post-fee value, a partial charge leaves the unsettled gain G − S above it, still owing
rate · (G − S); an over-charge never lowers the mark). Fee due = rate · max(0, valueUsd −
highWaterUsd), rate = **the vault's own rate** as the chain says (\`VaultCreated\` carries it,
\`PerformanceFeeSet\` changes it: ledger type \`fee.rate.set\`; each charge settles at the rate in
force when it was made; vaults of a factory that emitted no rate: 20 %), so a gain is never taxed
twice. The mark is **per vault** (one owner), not per share: flows move it by
amount, so a deposit never creates a fee, and a withdrawal takes its pro-rata share of the
unsettled gain with it (that share is never taxed, and a loss carried forward shrinks the same
way). V is the value just before the flow; holdings are read at the block's end, so when a
vault has several flows in one block each is taken against the block's end value less the
flows after it — the same figures as the same flows in blocks of their own.
Status (first match wins): \`suspended\` (suspension non-null), \`exiting\` (exit requested, not
yet completed), \`attention\` (drained: \`drain\` non-null — tokens left with no vault event since
the owner last acted, however much is left, nothing included), \`idle\` (no capital: \`valueUsd\` below the dust threshold of 0.01 USD, so wei
left by rounding or a few tokens sent by a stranger do not make a vault look active; pending
rewards are always in \`pendingRewardsUsd\`, whatever the status), \`exiting\` again once an exit
**completed** while anything of value is still left to hand back to the owner (unclaimed rewards,
fees owed on a closed position, a balance), \`aiming\` (capital, no deployed position, and no
exit completed since the vault was last put to work), \`attention\`
(at least one deployed position out of range), \`earning\` (every deployed position in range).
Transitions follow from these conditions as records are applied; a suspended vault stays
suspended until resumed, and exits remain available while suspended. After an exit completes a
vault never reads \`aiming\`: it is \`exiting\` while something can still be handed back and
\`idle\` once nothing can; a deposit or a new position puts it back to work (the derived status).
**Block ends only.** Every figure of a snapshot is the vault at the end of block \`blockNumber\`
(additive field; \`updatedAt\` is that block's time). A vault's records of one block are all
valued at the block's end, so while the projector has folded only part of a block (a log fetch
can end inside one) the snapshot still shows the previous block end — never the block's end
value beside part of its flows, which would read as a gain. A vault created in a block it has not
finished shows no value and no capital (\`idle\`) until then.
\`behind\` (additive): null when every record of the vault in the log was applied; otherwise
\`{ deadLetters, kinds, first: { partition, offset } }\`: the projector could not apply some of
the vault's records (unreadable, breaking the log's rules, or a fold bug), so the figures may miss
their effect until an operator re-applies them (\`vault-yield dead-letters retry\`).
A vault **held** behind a gap says so: \`kinds\` holds \`gap\` and \`behind.gap\` is
\`{ lastSeq, missingFrom, missingTo, fromBlock, toBlock }\`. Every record carries its vault's
sequence number (record schema 3); a number missing from the log (a record lost on its way) is
never folded past: the snapshot stays at \`lastSeq\` (its figures, positions and equity stop
there), later records of the vault are held, and every other vault goes on. Once the missing
records are published again (\`vault-yield republish\`), the projector folds them and the held
ones by itself, and the vault is exactly what a run without the loss would have made. The fold
itself never refuses what the chain accepted: what the events do not explain is reconciled
against the balances read at the block (\`balance.reconciled\` rows).
\`lp\` (additive) holds the LP figures — the vault against holding, trading fees and rewards
earned, their APRs, the attribution of \`netUsd\`, divergence loss, time in range, rebalances,
drawdown, PnL in token terms — and each position's \`timeInRange\` its share of block time in
range (definitions: LP figures below; both null on a vault folded before fold version 5, until a
rebuild).
Caching: \`ETag\` changes with every record applied to the vault; send it back in
\`If-None-Match\` to get a 304 without a body. \`Cache-Control: public, max-age=N\` (a few seconds).

## Equity
\`GET /v1/vault/{vault}/equity?from=&to=&points=\` returns the series **oldest first**. Window:
\`from\` inclusive, \`to\` exclusive (both optional; default the vault's whole history).
Resolution: at most \`points\` points (default ${LIMITS.equity.defaultPoints}, 1–${LIMITS.equity.maxPoints}; out of range is a 400).
Downsampling happens on the server and never invents a point: a window of at most \`points\`
points is returned whole; otherwise the window's **first** point is kept, the span from it to the
window's last point is cut into \`points − 1\` equal time buckets and the **last** point of each
non-empty bucket is kept — so the window's first and last points are always both served, and
each point is a real state (value and cumulative flows of one instant). The chart's gain net of
flows over the window is therefore that of the full series, whatever \`points\` is.
\`points=1\` returns the window's latest point alone (a current value; a gain needs two).
Each point's \`blockNumber\` (additive field) is the block at whose end it is valued (\`ts\` is
that block's time). A vault has at most one point per block, its state at the block's end:
records that share a block are all valued at its end, so only the last of them is an instant
(its value and all of the block's flows); the stored series holds a point where value, flows,
the holding value or strategy changed. Every point carries cumulative \`capitalInUsd\` and
\`capitalOutUsd\`: a chart's gain between two points is the change of \`valueUsd + capitalOutUsd −
capitalInUsd\`, so deposits and withdrawals never show as gains or losses. \`holdValueUsd\`
(additive) is what holding what was put in would be worth at the point — the vs-holding line (LP
figures below; null on points of a projection folded before fold version 5, until a rebuild).

## Where values come from
Every figure is valued from what the chain holds at the block of the vault's last record: token
balances read (\`balanceOf\`), each position's amounts at its pool's sqrtPrice plus what the pool
owes it (tokensOwed and the fees accrued since its last update, computed with the pool's own
fee-growth formula), pending rewards, at that block's feed prices (\`latestRoundData\`). Values of
records that share a block are the block's end state. Additive snapshot fields:
\`pendingRewardsUsd\` (whole vault, shown with or without open positions), \`uncollectedFeesUsd\`
(vault and per position; included in valueUsd) and \`stalePrices\`: every price a served figure
used — of the tokens held, in positions or pending as rewards, and of the benchmark basket behind
\`marketDeltaUsd\` even when no longer held — that is \`stale\` (the feed's \`updatedAt\` older
than its heartbeat at \`updatedAt\`) or \`invalid\` (\`reason\`; feed, age and heartbeat in
seconds; empty when all are fresh and valid) — still used, never silently. A feed that answers
zero or a negative value gave **no price**: the last valid answer keeps valuing the token (its
\`priceUpdatedAt\`), flagged \`invalid\` until a valid answer returns — a deposit is never valued
at 0, and no gain appears when the price comes back. **A token that never had a valid price**
(its feed answered no price at every block the vault read it so far) has no last valid answer: a
flow of it (deposit, withdrawal, tokens received, an unexplained change, a fee charged) is in no
USD figure yet — not \`capitalInUsd\`, \`capitalOutUsd\`, the fees object or the benchmark
basket — and is listed in the additive snapshot field \`unpricedFlows\` (token, symbol, \`flow\`,
whole-token \`amount\`, \`blockNumber\`); its ledger row's \`amounts[].valueUsd\` (and a
\`balance.reconciled\` row's \`valueUsd\`) is **null**, never 0. At the token's first valid
price every waiting flow is booked, in log order, as a flow of that block at that price: the
tokens' value appears together with the capital that brought them, so no part of a deposit reads
as a gain (nor as a market move, nor as return), and the high water and basket take it as any
deposit. The row's USD stays null (the price at its block was none); the snapshot's figures carry
its value from the first price's block on.
**Tokens sent straight to a vault.** A plain ERC-20 transfer to a vault (in a transaction where
the vault emitted no event) is a ledger row of its own, type \`transfer.received\` (\`data\`:
\`from\`, \`token\`, raw \`amount\`), under the transfer's transaction hash and at its log
position: it is booked there as capital in (a donation is not performance), so the flows of its
block settle in the chain's order.
**Positions minted for a vault by someone else.** Liquidity that another account mints in the
vault's pool with the vault as owner (a Uniswap v3 \`Mint\` whose \`owner\` is the vault and whose
\`sender\` is not: the vault mints its own positions itself — also inside a transaction where the
vault emits an event of its own) is the vault's on chain: it is valued at every block
from the pool's own position (liquidity and what the pool owes it), listed in \`positions\` — with
the pool's position key, keccak256(vault, tickLower, tickUpper) as a decimal uint256, for \`id\`
when it is no live position of the vault's own, or merged into the vault's position of the same
range — and what the pool took for it is a ledger row of its own, type \`position.received\`
(\`data\`: \`from\` (who minted), \`pool\`, \`tickLower\`, \`tickUpper\`, \`liquidity\`, raw
\`amount0\` / \`amount1\` of the pool's token0 / token1), booked at its log position as capital in.
Only the vault's own pool is watched: a position minted for it in another pool is nothing its
code can ever reach.
**Reconciliation.** What no record explains (tokens sent straight to a vault inside a transaction
where the vault also emitted an event, dust, rounding) is still caught: at the vault's last record
of each block the balances read are compared with the balances its records explain; a difference
is booked explicitly, as capital in (more than explained: \`fees.unexplainedInUsd\`, never
netUsd) or as a loss (less: \`fees.unexplainedOutUsd\`, netUsd drops by it, the vault is flagged
\`drain\`), valued at that block's prices, and shown as a ledger row of type
\`balance.reconciled\` (\`data\`: token, signed raw \`amount\`, \`valueUsd\` — null for a token
without a valid price yet —, \`bookedAs\` \`capitalIn\` | \`loss\`, or \`capitalOut\` on rows
projected before fold version 4; same block and tx hash as the record where it was found,
\`txIndex\` 2147483647 and \`logIndex\` −2, −3, … so it sorts after the block's transactions).
A dead-lettered withdrawal reads as such a loss until \`vault-yield dead-letters retry\`
re-applies it (the snapshot says \`behind\` meanwhile). Tokens taken out of a vault with no vault
event (a Transfer from the vault) are booked at their own block: a vault with no record there is
marked at once, and the loss and \`drain\` are served at that block.

## LP figures
${lpFigures}

## Events (activity ledger)
\`GET /v1/vault/{vault}/events\` returns ledger rows **newest first**, ordered by
(blockNumber, txIndex, logIndex) descending. Event types (\`type\`): ${activityTypes.map((t) => `\`${t}\``).join(', ')}.
\`mark\` and \`revert\` are internal records and are never served.
Filters (all optional, combined with AND): \`type\` — one or several types, comma-separated
(\`type=deposit,withdrawal\`) and/or repeated (\`type=deposit&type=withdrawal\`), matched as a set;
\`since\`/\`until\` on the row's block time \`ts\`; \`limit\` — rows per page, default
${LIMITS.events.default}, 1–${LIMITS.events.max}; a value outside is a **400, not clamped**.
Pagination: when more rows match, the response carries \`X-Next-Cursor: <cursor>\` and
\`Link: <…&cursor=…>; rel="next"\`; repeat the request with \`cursor=<cursor>\` (and the same
filters) for the next page. The cursor is opaque (a keyset position, not an offset): pages never
repeat or skip a row while new rows are appended, and newer rows do not shift older pages. No
header means the last page. The body is always a JSON array.
Row fields: \`id\` (stable: chainId:blockHash:txHash:logIndex:vault), \`vault\`, \`chainId\`,
\`type\`, \`txHash\`, \`blockNumber\`, \`blockHash\`, \`txIndex\`, \`logIndex\`, \`ts\`, and \`data\`,
the event payload as recorded (its fields depend on \`type\`).
Push delivery (callbacks, streams) is not offered: poll with \`since\` or the cursor.

## Transactions and vault list
\`GET /v1/tx/{hash}?limit=&cursor=\` returns the activity rows of one transaction across all
vaults and chains (a hash may repeat across chains: each row carries its \`chainId\`), newest
first, then by chain id descending and vault ascending (404 when none), paginated like events
(limit default ${LIMITS.tx.default}, 1–${LIMITS.tx.max}; next page in \`X-Next-Cursor\` /
\`Link\`). \`GET /v1/vaults?owner=&chainId=&limit=&cursor=\` lists vaults by ascending address,
then chain id (each entry with its \`id\` and \`chainId\`), optionally of one owner and / or one
chain, paginated like events (limit default ${LIMITS.vaults.default}, 1–${LIMITS.vaults.max}).

## Strategies and universe
\`/v1/strategies\`, \`/v1/universe\` and \`/v1/universe/pairs\` take no query parameters and are
returned **whole** (no pagination): they are small and bounded (at most 1000 entries each).
The universe endpoints return only what passed the latest screen, in its output order; the ranking
model itself is not exposed. \`X-Screen-Version\` and \`X-Screened-At\` (Unix ms) name the screen
run. \`liveApr\` and \`sigma\` are realised figures (fractions per year), never projections (how they
relate to DefiLlama's \`mu\` and \`sigma\`: the end of LP figures). Each entry's \`lp\` holds the LP
figures over the strategy's member vaults — fee, reward and realised divergence APR on
time-weighted capital, time in range, rebalances a week, the maximum drawdown of its daily
returns — every one null while \`liveApr\` is (definitions: LP figures, per strategy).
Returns are time-weighted from exact values, **net of the performance fee as it is earned**: the
fold chains each vault's return index over N = V − rate · max(0, V − highWaterUsd), the value net
of the fee accrued and not yet charged (rate the vault's own rate then), on every block it has
records in: I ← I · N_0 / N_start (N_start at the vault's previous block end, N_0 just before the
block's first flow, V_0 = V_end less the block's capital in − out, so deposits and withdrawals are
not returns, however many share a block), then across each performance fee charged
I ← I · N_after / N_before. A charge takes C from the value and settles the high-water mark, so N
moves only by what the charge differs from the fee accrued: a charge of the whole fee due moves
nothing (the fee is a return of the days, and the strategy, that earned the gain — not of the day
it is charged), an over-charge is a loss; a change of the vault's rate re-prices the fee accrued
where it happens. A fee in the block of a deposit or withdrawal counts exactly as it would in a
block of its own — never from the rounded equity figures. The block is the shortest sub-period because
holdings are read at its end. A sub-period that starts with the vault worth under **1 USD**
has no return (a return on dust is noise). Each sub-period counts for the **strategy in force
then**: a vault that switches strategy keeps its earlier history with the earlier strategy.
Daily returns are per **elapsed, complete** UTC day: every day that has ended (see n below) and
whose start finds a vault holding at least 1 USD under the strategy gives that vault a daily
return, **0 on a quiet day** (nothing moved); a move between two points lands on the day it ends,
and the day still in progress counts once it has ended. A strategy's daily return is the mean of
its vaults' daily returns weighted by their value at the start of the day; days when none of its
vaults held capital are not counted. \`liveApr\` = (Π(1 + r_d) − 1) · 365 / n and \`sigma\` =
sample standard deviation of the n daily returns (zeros included) · √365, n = operating days
ended by **how far the log has been folded**, never by the wall clock — each vault's days up to
how far **that vault** was folded (the block time of the last record folded in its log partition,
or its own last record while it is held at a sequence gap), so a vault folded less far than
others has no days past that point rather than quiet ones: the same records give the same figures
whether the service is in step with the chain, catching up or rebuilding with uneven partitions. Both are null while n is below the configured minimum (default
30 days), and recomputed every few minutes. Strategy \`pairs\` reflect the live screen and change
as it re-ranks. A pair has one orientation everywhere: the pool's own, \`a\` the token of the lower
address (token0), \`b\` the other (token1) — \`/v1/strategies[].pairs\`, \`/v1/universe/pairs\` and a
position's \`pool\` and \`range\` (the price of \`a\` in \`b\`) alike, whichever way the screen named it
(a screen naming both orientations of one pair is refused). Asset categories: \`major\`, \`stable\`, \`stock token\`, \`meme\`.

## Errors
Every error has one body: \`{ "error": { "code": string, "message": string } }\`, never a stack
trace (a 409 adds \`candidates\`). Codes: \`invalid_request\` (400: a path or query parameter failed validation; the message
starts with its path, e.g. \`query.limit: …\`), \`not_found\` (404: unknown vault, transaction or
route), \`ambiguous_vault\` (409: a bare address that is a vault on several chains;
\`error.candidates\` lists their ids, e.g. \`{"error":{"code":"ambiguous_vault","message":"…",
"candidates":["eip155:10:0x…","eip155:8453:0x…"]}}\`), \`method_not_allowed\` (405, with \`Allow\`), \`unauthorized\` (401, \`/metrics\` without
the admin token), \`rate_limited\` (429, with \`Retry-After\`),
\`unavailable\` (503: the database is unreachable or not migrated; retry later), \`internal\`
(500: a server bug; client input never causes one).

## Limits
Per-client token bucket on every route but \`/health\` (client = remote address; behind proxies
configured as trusted, by hop count or address ranges, the rightmost \`X-Forwarded-For\` entry not
written by one of them — entries a client writes itself are never believed): a sustained rate and a
burst, configured per deployment (defaults 20 requests/s, burst 40); CORS preflights count. An
IPv6 client is its /64 (one bucket for a whole subnet a host may rotate addresses in); an
IPv4-mapped IPv6 address counts as its IPv4 address. Requests of one client **in flight at once**
are capped too (default a quarter of the database pool, at least 1): a few more wait their turn,
the rest get 429 with \`Retry-After\`. Every limited response carries
\`RateLimit-Limit\` (burst), \`RateLimit-Remaining\` and \`RateLimit-Reset\` (seconds to a full
bucket); a 429 carries \`Retry-After\` (seconds). Size bounds: \`limit\` ≤ ${LIMITS.events.max}, \`points\` ≤
${LIMITS.equity.maxPoints}, catalogue lists ≤ 1000, query values ≤ ${LIMITS.valueLength} characters; a request
head (URL and headers) over 16 KiB is refused by the HTTP server itself with 431 and no body. Responses over 1 KiB are gzip/deflate-compressed when the
client sends \`Accept-Encoding\`.
`.trim();
