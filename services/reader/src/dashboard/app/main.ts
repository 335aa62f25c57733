/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import {
  createClient,
  type EquityPoint,
  type EventsQuery,
  type LedgerRow,
  type LedgerType,
  nextCursor,
  ok,
  type Snapshot,
  type StreamState,
  type Subscription,
  type VaultSummary,
  type VaultsQuery,
} from '@vault-yield/client';
import uPlot from 'uplot';
import {
  byId,
  fill,
  h,
  instant,
  price,
  setZone,
  short,
  sign,
  time,
  tokens,
  usd,
  usdSigned,
  zoneLabel,
} from './dom.js';
import { openText, renderLp, shareText } from './lp.js';

/**
 * The dashboard: reads only the public API through @vault-yield/client. The vault view is built
 * from the snapshot alone; fields it does not know are listed as text under "Other fields".
 */

/**
 * Every read revalidates (`cache: 'no-cache'`: the reader's ETag makes it a 304 when nothing
 * changed). The reader lets caches keep vault resources a few seconds (CACHE_MAX_AGE_S), but this
 * page learns of changes from its stream: a read after a stream event (a retract, a reset, a poll)
 * served from the browser's cache would draw the page as it was before the event.
 */
const api = createClient(location.origin, {
  fetch: (input, init) => fetch(input, { ...init, cache: 'no-cache' }),
});
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
/** A vault id (CAIP-10): the page names vaults by id, the same address being a vault on several chains. */
const VAULT_ID = /^eip155:[1-9][0-9]*:0x[0-9a-fA-F]{40}$/;
/** A ledger row's vault id. */
const rowVault = (r: { chainId: number; vault: string }) => `eip155:${r.chainId}:${r.vault}`;
const TX = /^0x[0-9a-fA-F]{64}$/;
const VAULTS_PAGE = 20;
const LEDGER_PAGE = 10;

function report(err: unknown): void {
  const el = byId('notice');
  el.textContent = err instanceof Error ? err.message : String(err);
  el.hidden = false;
}
const clearNotice = () => {
  byId('notice').hidden = true;
};

// ---- vault list --------------------------------------------------------------------------

const list = {
  owner: '',
  /** The chain shown ('' all). */
  chain: '',
  cursor: undefined as string | undefined,
  rows: [] as VaultSummary[],
};

async function loadVaults(more = false): Promise<void> {
  const query: VaultsQuery = { limit: VAULTS_PAGE };
  if (list.owner) query.owner = list.owner;
  if (list.chain) query.chainId = Number(list.chain);
  if (more && list.cursor) query.cursor = list.cursor;
  const res = await api.v1.vaults.$get({ query });
  const page = await ok(res);
  list.rows = more ? [...list.rows, ...page] : page;
  list.cursor = nextCursor(res);
  renderVaults();
  follow();
  // `#vault=` names a vault id (or, from links of a single-chain deployment, a bare address).
  const wanted = new URLSearchParams(location.hash.slice(1)).get('vault');
  if (!more && !current.vault) {
    const named =
      wanted && VAULT_ID.test(wanted)
        ? `${wanted.slice(0, wanted.lastIndexOf(':'))}:${wanted.slice(wanted.lastIndexOf(':') + 1).toLowerCase()}`
        : wanted && ADDRESS.test(wanted)
          ? (list.rows.find((v) => v.vault === wanted.toLowerCase())?.id ?? (await idOfAddress(wanted)))
          : undefined;
    const first = named ?? list.rows[0]?.id;
    if (first) await selectVault(first);
  }
}

/** The id of the vault a bare address names (on one chain), or undefined (none, or several: 409). */
async function idOfAddress(address: string): Promise<string | undefined> {
  const res = await api.v1.vault[':vault'].snapshot.$get({ param: { vault: address } });
  return res.ok ? (await res.json()).id : undefined;
}

function renderVaults(): void {
  const rows = list.rows.map((v) =>
    h(
      'tr',
      {
        class: v.id === current.vault ? 'selected' : '',
        'data-vault': v.id,
        tabindex: 0,
        onclick: () => void selectVault(v.id).catch(report),
        onkeydown: (e: Event) => {
          if ((e as KeyboardEvent).key === 'Enter') void selectVault(v.id).catch(report);
        },
      },
      h('td', { class: 'mono', title: v.id }, short(v.vault)),
      h('td', { class: 'num', 'data-testid': 'chain' }, String(v.chainId)),
      h('td', { class: 'mono hide-narrow', title: v.owner }, short(v.owner)),
      h('td', { class: 'hide-narrow' }, v.strategy),
      h('td', {}, h('span', { class: `badge ${v.status}` }, v.status)),
      h('td', { class: 'num' }, usd(v.valueUsd)),
      h('td', { class: `num ${sign(v.netUsd)}` }, usdSigned(v.netUsd)),
    ),
  );
  fill(
    'vaults',
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', {}, 'Vault'),
          h('th', { class: 'num' }, 'Chain'),
          h('th', { class: 'hide-narrow' }, 'Owner'),
          h('th', { class: 'hide-narrow' }, 'Strategy'),
          h('th', {}, 'Status'),
          h('th', { class: 'num' }, 'Value'),
          h('th', { class: 'num' }, 'Net'),
        ),
      ),
      h('tbody', {}, ...rows),
    ),
    rows.length === 0 ? h('p', { class: 'empty' }, 'No vaults.') : null,
  );
  byId('vaults-count').textContent = `${list.rows.length}${list.cursor ? '+' : ''} shown`;
  byId<HTMLButtonElement>('vaults-more').hidden = !list.cursor;
}

// ---- vault view ---------------------------------------------------------------------------

/** The selected vault: its id (`eip155:{chainId}:{address}`), and its snapshot's ETag. */
const current = { vault: '', etag: '' };
let chart: uPlot | undefined;

async function selectVault(vault: string): Promise<void> {
  current.vault = vault;
  const params = new URLSearchParams(location.hash.slice(1));
  params.set('vault', vault);
  history.replaceState(null, '', `#${params.toString()}`);
  for (const tr of document.querySelectorAll('#vaults tr[data-vault]'))
    tr.classList.toggle('selected', tr.getAttribute('data-vault') === vault);
  ledger.cursors = [];
  ledger.cursor = undefined;
  current.etag = '';
  await Promise.all([loadSnapshot(), loadEquity(), loadLedger()]);
  follow();
}

/** The current vault's snapshot; with `revalidate`, only when it changed (If-None-Match: 304 otherwise). */
async function loadSnapshot(revalidate = false): Promise<boolean> {
  const vault = current.vault;
  const headers: Record<string, string> = revalidate && current.etag ? { 'If-None-Match': current.etag } : {};
  const res = await api.v1.vault[':vault'].snapshot.$get({ param: { vault } }, { headers });
  if (res.status === 304 || vault !== current.vault) return false;
  const snap = await ok(res);
  current.etag = (res.headers.get('etag') ?? '').replace(/^W\//, ''); // the stream's is the strong one
  renderSnapshot(snap);
  return true;
}

const stat = (label: string, value: string, cls = '', testid = '') =>
  h(
    'div',
    { class: 'stat', 'data-testid': testid || undefined },
    h('span', {}, label),
    h('strong', { class: cls }, value),
  );

/** Keys the view renders; any other key of the snapshot goes under "Other fields". */
const KNOWN = new Set([
  'id',
  'chainId',
  'vault',
  'owner',
  'status',
  'strategy',
  'valueUsd',
  'capitalInUsd',
  'capitalOutUsd',
  'netUsd',
  'strategyDeltaUsd',
  'marketDeltaUsd',
  'positions',
  'fees',
  'suspension',
  'updatedAt',
  'blockNumber',
  'pendingRewardsUsd',
  'uncollectedFeesUsd',
  'stalePrices',
  'behind',
  'lp',
]);

/** A stale price or a `behind` as the page shows them; unexpected shapes still render as text. */
function staleText(p: unknown): string {
  const o = (p ?? {}) as Record<string, unknown>;
  const name = String(o.symbol ?? o.token ?? '?');
  // The feed answered no price (zero or less): the last valid one is used.
  if (o.reason === 'invalid') return `${name} (no valid answer: last valid price used)`;
  return typeof o.ageSeconds === 'number' && typeof o.heartbeatSeconds === 'number'
    ? `${name} (${o.ageSeconds} s old, heartbeat ${o.heartbeatSeconds} s)`
    : name;
}

function renderSnapshot(s: Snapshot): void {
  fill(
    'vault-title',
    h('span', { class: 'mono' }, s.vault),
    ' ',
    h('span', { class: 'badge chain', 'data-testid': 'vault-chain', title: s.id }, `chain ${s.chainId}`),
    ' ',
    h('span', { class: `badge ${s.status}`, 'data-testid': 'status' }, s.status),
  );
  fill(
    'vault-meta',
    `owner ${s.owner} · strategy ${s.strategy} · as of block ${s.blockNumber} · ${time(s.updatedAt)} UTC`,
  );
  fill(
    'summary',
    stat('Value', usd(s.valueUsd), '', 'value'),
    stat('Capital in', usd(s.capitalInUsd), '', 'capital-in'),
    stat('Capital out', usd(s.capitalOutUsd), '', 'capital-out'),
    stat('Net', usdSigned(s.netUsd), sign(s.netUsd), 'net'),
    stat('of which strategy', usdSigned(s.strategyDeltaUsd), sign(s.strategyDeltaUsd), 'strategy-delta'),
    stat('of which market', usdSigned(s.marketDeltaUsd), sign(s.marketDeltaUsd), 'market-delta'),
    stat('Uncollected fees (in value)', usd(s.uncollectedFeesUsd), '', 'uncollected-fees'),
    stat('Pending rewards (in value)', usd(s.pendingRewardsUsd), '', 'pending-rewards'),
  );
  const split = Math.abs(s.strategyDeltaUsd) + Math.abs(s.marketDeltaUsd);
  fill(
    'split',
    split > 0
      ? h(
          'div',
          { class: 'splitbar', title: 'net = strategy + market' },
          h('i', {
            class: `strategy ${sign(s.strategyDeltaUsd)}`,
            style: `width:${(100 * Math.abs(s.strategyDeltaUsd)) / split}%`,
          }),
          h('i', {
            class: `market ${sign(s.marketDeltaUsd)}`,
            style: `width:${(100 * Math.abs(s.marketDeltaUsd)) / split}%`,
          }),
        )
      : null,
  );
  fill(
    'suspension',
    s.suspension
      ? h(
          'p',
          { class: 'alert', 'data-testid': 'suspension' },
          h('strong', {}, 'Suspended: '),
          s.suspension.reason,
          ` (since ${time(s.suspension.since)} UTC; exits stay available)`,
        )
      : null,
  );
  const stale = (s as { stalePrices?: unknown }).stalePrices;
  const behind = (s as { behind?: unknown }).behind;
  fill(
    'flags',
    Array.isArray(stale) && stale.length > 0
      ? h(
          'p',
          { class: 'alert', 'data-testid': 'stale' },
          h('strong', {}, 'Stale or invalid prices: '),
          stale.map(staleText).join(', '),
        )
      : null,
    behind
      ? h(
          'p',
          { class: 'alert', 'data-testid': 'behind' },
          h('strong', {}, 'Behind: '),
          'some records of this vault could not be applied (dead letters); its figures may miss them until they are retried',
        )
      : null,
  );
  renderPositions(s.positions);
  renderLp(s);
  fill(
    'fees',
    stat('Contributed', usd(s.fees.contributedUsd)),
    stat('Withdrawn', usd(s.fees.withdrawnUsd)),
    stat('Performance fee charged', usd(s.fees.taxedUsd), '', 'fees-taxed'),
    stat('High-water mark', usd(s.fees.highWaterUsd)),
  );
  const extra = Object.entries(s).filter(([k]) => !KNOWN.has(k));
  const other = fill(
    'other',
    ...extra.map(([k, v]) =>
      h('div', { class: 'kv' }, h('span', { class: 'mono' }, k), h('code', {}, JSON.stringify(v) ?? 'null')),
    ),
  );
  other.parentElement!.hidden = extra.length === 0;
}

function renderPositions(positions: Snapshot['positions']): void {
  if (positions.length === 0) {
    fill('positions', h('p', { class: 'empty' }, 'No open positions.'));
    return;
  }
  fill(
    'positions',
    ...positions.map((p) => {
      const { lower, upper, current: at } = p.range;
      // The bar spans the range with a margin of a fifth of its width either side; the marker
      // sits at the current price, clamped to the bar's ends when far outside.
      const span = upper - lower || 1;
      const from = lower - span / 5;
      const to = upper + span / 5;
      const pct = (x: number) => Math.min(100, Math.max(0, ((x - from) / (to - from)) * 100));
      const tir = p.timeInRange ?? null;
      return h(
        'div',
        { class: 'position', 'data-testid': 'position' },
        h(
          'div',
          { class: 'position-head' },
          h('strong', {}, `${p.pool.a}/${p.pool.b}`),
          ` ${p.pool.venue} · ${(p.pool.feeTier / 10_000).toFixed(2)}% · #${p.id} `,
          h(
            'span',
            { class: `badge ${p.inRange ? 'earning' : 'attention'}` },
            p.inRange ? 'in range' : 'out of range',
          ),
        ),
        h(
          'div',
          {
            class: 'rangebar',
            role: 'img',
            'aria-label': `price ${price(at)} in range ${price(lower)} to ${price(upper)}`,
          },
          h('i', { class: 'range', style: `left:${pct(lower)}%;width:${pct(upper) - pct(lower)}%` }),
          h('b', { class: `marker ${p.inRange ? 'in' : 'out'}`, style: `left:${pct(at)}%` }),
        ),
        h(
          'div',
          { class: 'range-labels' },
          h('span', {}, `lower ${price(lower)}`),
          h('span', { 'data-testid': 'current-price' }, `current ${price(at)}`),
          h('span', {}, `upper ${price(upper)}`),
        ),
        h(
          'div',
          { class: 'muted' },
          h(
            'span',
            { class: 'position-time', title: 'share of block time in range since the position was opened' },
            'time in range ',
            h('strong', { 'data-testid': 'position-time-in-range' }, shareText(tir)),
            ` ${openText(tir)}`,
          ),
          ` · pending rewards ${usd(p.pendingRewardsUsd)}`,
        ),
      );
    }),
  );
}

// ---- equity ---------------------------------------------------------------------------------

/** The chart's points (a snapshot from the stream extends them). */
let equityPoints: EquityPoint[] = [];

async function loadEquity(): Promise<void> {
  const points = await ok(
    await api.v1.vault[':vault'].equity.$get({
      param: { vault: current.vault },
      query: { points: 300 },
    }),
  );
  renderEquity(points);
}

function renderEquity(points: EquityPoint[]): void {
  equityPoints = points;
  chart?.destroy();
  chart = undefined;
  const box = byId('equity');
  box.replaceChildren();
  byId('equity-note').hidden = true;
  if (points.length === 0) {
    box.append(h('p', { class: 'empty' }, 'No equity points yet.'));
    return;
  }
  const xs = points.map((p) => p.ts / 1000);
  // Net of flows: what the vault made, deposits and withdrawals taken out.
  const net = points.map((p) => p.valueUsd - p.capitalInUsd + p.capitalOutUsd);
  const deposits = points.map((p, i) =>
    i > 0 && p.capitalInUsd > points[i - 1]!.capitalInUsd ? net[i]! : null,
  );
  const withdrawals = points.map((p, i) =>
    i > 0 && p.capitalOutUsd > points[i - 1]!.capitalOutUsd ? net[i]! : null,
  );
  if (points[0]!.capitalInUsd > 0) deposits[0] = net[0]!;
  // Holding, net of the same flows (the gap to the vault's line is lp.hold.leadUsd); drawn only
  // where a point carries it (points folded before fold version 5 have none).
  const hold = points.map((p) =>
    p.holdValueUsd == null ? null : p.holdValueUsd - p.capitalInUsd + p.capitalOutUsd,
  );
  const holding = hold.filter((v) => v !== null).length;
  const marks = (stroke: string) => ({
    stroke,
    fill: stroke,
    paths: () => null,
    points: { show: true, size: 9, stroke, fill: stroke },
  });
  const dollars = (_u: uPlot, v: number | null) => (v == null ? '–' : usd(v));
  const opts: uPlot.Options = {
    width: Math.max(280, box.clientWidth),
    height: 240,
    scales: { x: { time: true } },
    axes: [{}, { values: (_u, ticks) => ticks.map((t) => usd(t)), size: 80 }],
    series: [
      {},
      { label: 'Net of flows', stroke: '#2563eb', width: 2, value: dollars },
      ...(holding > 0
        ? [{ label: 'Holding', stroke: '#9333ea', width: 1.5, dash: [6, 4], value: dollars }]
        : []),
      { label: 'Deposit', ...marks('#16a34a'), value: dollars },
      { label: 'Withdrawal', ...marks('#dc2626'), value: dollars },
    ],
  };
  const data = [xs, net, ...(holding > 0 ? [hold] : []), deposits, withdrawals];
  chart = new uPlot(opts, data as uPlot.AlignedData, box);
  box.dataset.points = String(points.length);
  box.dataset.deposits = String(deposits.filter((d) => d !== null).length);
  box.dataset.withdrawals = String(withdrawals.filter((d) => d !== null).length);
  box.dataset.hold = String(holding);
  byId('equity-note').hidden = holding === 0;
}

// ---- ledger ---------------------------------------------------------------------------------

const ledger = {
  cursor: undefined as string | undefined,
  /** Cursors of the pages before the current one (undefined = the first page). */
  cursors: [] as (string | undefined)[],
  next: undefined as string | undefined,
  /** The rows shown (a row from the stream goes on top of the first page). */
  rows: [] as LedgerRow[],
};

/** A datetime-local value (read as UTC) → ISO-8601 with Z, or undefined when empty. */

async function loadLedger(): Promise<void> {
  const type = byId<HTMLSelectElement>('ledger-type').value;
  const since = instant(byId<HTMLInputElement>('ledger-since').value);
  const until = instant(byId<HTMLInputElement>('ledger-until').value);
  const query: EventsQuery = { limit: LEDGER_PAGE };
  if (type) query.type = type as LedgerType; // an option of the document's own type list
  if (since) query.since = since;
  if (until) query.until = until;
  if (since && until && Date.parse(since) >= Date.parse(until)) {
    report('"From" must be earlier than "to".');
    return;
  }
  if (ledger.cursor) query.cursor = ledger.cursor;
  const res = await api.v1.vault[':vault'].events.$get({ param: { vault: current.vault }, query });
  const rows = await ok(res);
  ledger.next = nextCursor(res);
  ledger.rows = rows;
  clearNotice();
  renderLedger(rows, 'ledger', true);
  byId('ledger-page').textContent = `page ${ledger.cursors.length + 1}`;
  byId<HTMLButtonElement>('ledger-newer').disabled = ledger.cursors.length === 0;
  byId<HTMLButtonElement>('ledger-older').disabled = !ledger.next;
}

/**
 * What a row moved, for people: each token amount with its symbol and USD at the row's block
 * ("1.5 WETH ($4,500.00)"); a row without amounts shows its other fields; a row projected before
 * amounts existed (null) shows its raw data.
 */
function rowData(r: LedgerRow): HTMLElement {
  if (r.amounts === null) return h('code', {}, JSON.stringify(r.data));
  if (r.amounts.length > 0)
    return h(
      'span',
      { 'data-testid': 'amounts' },
      ...r.amounts.map((a, i) =>
        h(
          'span',
          { class: 'amount', title: `${a.field}: ${a.amount} ${a.symbol} (${a.token})` },
          // null: no valid price for the token yet (valued at its first one, never at 0)
          `${i > 0 ? ' · ' : ''}${tokens(a.amount)} ${a.symbol} (${a.valueUsd === null ? 'no price yet' : usd(a.valueUsd)})`,
        ),
      ),
    );
  const fields = Object.entries(r.data as Record<string, unknown>);
  return fields.length === 0
    ? h('span', { class: 'muted' }, '—')
    : h(
        'code',
        {},
        fields.map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', '),
      );
}

/** One line per ledger row; what it moved shown in tokens and USD. */
function renderLedger(rows: LedgerRow[], target: string, withVault: boolean): void {
  fill(
    target,
    rows.length === 0
      ? h('p', { class: 'empty' }, 'No events.')
      : h(
          'table',
          {},
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', {}, `Time (${zoneLabel()})`),
              h('th', {}, 'Type'),
              withVault ? null : h('th', {}, 'Vault'),
              h('th', {}, 'Tx'),
              h('th', { class: 'num hide-narrow' }, 'Block'),
              h('th', { class: 'hide-narrow' }, 'Data'),
            ),
          ),
          h(
            'tbody',
            {},
            ...rows.map((r) =>
              h(
                'tr',
                { 'data-type': r.type, 'data-id': r.id, class: fresh.has(r.id) ? 'fresh' : '' },
                h('td', { class: 'nowrap' }, time(r.ts)),
                h('td', {}, h('span', { class: 'type' }, r.type)),
                withVault
                  ? null
                  : h('td', { class: 'mono', title: rowVault(r) }, `${r.chainId} · ${short(r.vault)}`),
                h(
                  'td',
                  {},
                  h(
                    'button',
                    {
                      class: 'link mono',
                      title: r.txHash,
                      onclick: () => void lookupTx(r.txHash).catch(report),
                    },
                    short(r.txHash),
                  ),
                ),
                h('td', { class: 'num hide-narrow' }, r.blockNumber),
                h('td', { class: 'data hide-narrow' }, rowData(r)),
              ),
            ),
          ),
        ),
  );
}

// ---- live -----------------------------------------------------------------------------------

/** Ids of rows that came from the stream (highlighted once). */
const fresh = new Set<string>();
const live = {
  sub: undefined as Subscription | undefined,
  /** '*' once the stream is opened. */
  key: '',
  state: 'connecting' as StreamState | 'polling',
  poll: undefined as number | undefined,
};
const POLL_MS = 2_000;

function badge(state: StreamState | 'polling'): void {
  live.state = state;
  const el = byId('live');
  el.dataset.state = state;
  el.textContent = state === 'live' ? 'live' : state === 'polling' ? 'polling' : state;
}

/** Streams need fetch with a readable body (every current browser); without it the page polls. */
const canStream = typeof ReadableStream === 'function' && 'body' in Response.prototype;

/**
 * One stream for the page's life, of every vault (`GET /v1/stream`): the list's rows and the
 * selected vault update from it; never re-opened as the selection changes (no request aborted).
 */
function follow(): void {
  if (live.key === '*') return;
  live.key = '*';
  if (!canStream) {
    badge('polling');
    startPolling();
    return;
  }
  live.sub = api.subscribe('*', {
    snapshot: (e) => onSnapshot(e.id, e.snapshot, e.etag),
    ledger: (row) => onLedger(row),
    // A reorganisation orphaned some of the vault's rows: its ledger and chart (re-folded from the
    // fork on) are read again, so nothing of the orphaned blocks stays on the page.
    retract: (e) => {
      if (e.id === current.vault) reloadVault();
    },
    reset: () => {
      if (current.vault) reloadVault();
    },
    state: (state) => {
      badge(state === 'closed' ? 'polling' : state);
      // Refused (503: too many streams) or lost: poll with If-None-Match until it is back.
      if (state === 'live') stopPolling();
      else startPolling();
    },
  });
}

/** The vault's ledger and chart read again; one read at a time (see reloadVault). */
const reload = { running: false, again: false };

/**
 * Reads the selected vault's ledger and chart again. An event that arrives while a read is in
 * flight is shown at once, but the read's answer (asked for before it) would then draw over it:
 * the read runs once more after, so the page always ends as the API serves it.
 */
function reloadVault(): void {
  if (reload.running) {
    reload.again = true;
    return;
  }
  reload.running = true;
  void Promise.all([loadEquity(), loadLedger()])
    .catch(report)
    .finally(() => {
      reload.running = false;
      if (reload.again) {
        reload.again = false;
        reloadVault();
      }
    });
}

function onSnapshot(vault: string, s: Snapshot, etag: string): void {
  if (reload.running && vault === current.vault) reload.again = true;
  const row = list.rows.find((v) => v.id === vault);
  if (row) {
    Object.assign(row, { status: s.status, strategy: s.strategy, valueUsd: s.valueUsd, netUsd: s.netUsd });
    renderVaults();
  }
  if (vault !== current.vault || etag === current.etag) return;
  current.etag = etag;
  renderSnapshot(s);
  // The chart extends: the snapshot is the vault at its block's end, the series' next point (its
  // holding value the snapshot's lp.hold.valueUsd, none without LP figures). A snapshot of the
  // last point's block replaces it when a figure the point rule compares moved.
  const last = equityPoints.at(-1);
  const hold = s.lp?.hold.valueUsd ?? null;
  const moved =
    last !== undefined &&
    s.updatedAt === last.ts &&
    (s.valueUsd !== last.valueUsd ||
      s.capitalInUsd !== last.capitalInUsd ||
      s.capitalOutUsd !== last.capitalOutUsd ||
      hold !== (last.holdValueUsd ?? null));
  if (!last || s.updatedAt > last.ts || moved) {
    const point: EquityPoint = {
      chainId: s.chainId,
      ts: s.updatedAt,
      blockNumber: s.blockNumber,
      valueUsd: s.valueUsd,
      capitalInUsd: s.capitalInUsd,
      capitalOutUsd: s.capitalOutUsd,
      holdValueUsd: hold,
    };
    renderEquity(moved ? [...equityPoints.slice(0, -1), point] : [...equityPoints, point]);
  }
}

/** A new ledger row goes on top of the first page when it passes the page's filters. */
function onLedger(r: LedgerRow): void {
  if (rowVault(r) !== current.vault || ledger.cursor !== undefined) return;
  if (reload.running) reload.again = true;
  const type = byId<HTMLSelectElement>('ledger-type').value;
  const since = instant(byId<HTMLInputElement>('ledger-since').value);
  const until = instant(byId<HTMLInputElement>('ledger-until').value);
  if (
    (type && r.type !== type) ||
    (since && r.ts < Date.parse(since)) ||
    (until && r.ts >= Date.parse(until))
  )
    return;
  if (ledger.rows.some((x) => x.id === r.id)) return;
  fresh.add(r.id);
  const rows = [r, ...ledger.rows];
  if (rows.length > LEDGER_PAGE) {
    rows.length = LEDGER_PAGE;
    byId<HTMLButtonElement>('ledger-older').disabled = false;
    // The next page now starts after the last row shown: ask for it again when wanted.
    ledger.next = undefined;
    void api.v1.vault[':vault'].events
      .$get({ param: { vault: current.vault }, query: { limit: LEDGER_PAGE } })
      .then((res) => {
        ledger.next = nextCursor(res);
        byId<HTMLButtonElement>('ledger-older').disabled = !ledger.next;
      })
      .catch(() => {});
  }
  ledger.rows = rows;
  renderLedger(rows, 'ledger', true);
}

function startPolling(): void {
  if (live.poll !== undefined) return;
  live.poll = window.setInterval(() => {
    if (!current.vault) return;
    loadSnapshot(true)
      .then((changed) =>
        changed ? Promise.all([loadEquity(), ledger.cursor === undefined ? loadLedger() : null]) : null,
      )
      .catch(() => {});
  }, POLL_MS);
}

function stopPolling(): void {
  if (live.poll === undefined) return;
  clearInterval(live.poll);
  live.poll = undefined;
}

// ---- tx look-up -----------------------------------------------------------------------------

async function lookupTx(hash: string): Promise<void> {
  const input = byId<HTMLInputElement>('tx-hash');
  input.value = hash;
  if (!TX.test(hash)) {
    report('A transaction hash is 0x followed by 64 hex digits.');
    return;
  }
  const res = await api.v1.tx[':hash'].$get({ param: { hash } });
  if (res.status === 404) {
    fill('tx', h('p', { class: 'empty' }, 'No activity recorded for this transaction.'));
    return;
  }
  clearNotice();
  renderLedger(await ok(res), 'tx', false);
  byId('tx-panel').scrollIntoView({ block: 'nearest' });
}

// ---- wiring ---------------------------------------------------------------------------------

/** The chains this deployment follows: the list's chain filter. */
async function loadChains(): Promise<void> {
  const chains = await ok(await api.v1.chains.$get());
  const select = byId<HTMLSelectElement>('chain');
  for (const c of chains) select.append(h('option', { value: String(c.chainId) }, String(c.chainId)));
  const wanted = new URLSearchParams(location.hash.slice(1)).get('chain');
  if (wanted && chains.some((c) => String(c.chainId) === wanted)) {
    select.value = wanted;
    list.chain = wanted;
  }
  // One chain: nothing to choose.
  byId('chain-filter').hidden = chains.length < 2 && !list.chain;
}

async function loadTypes(): Promise<void> {
  // The event vocabulary comes from the API's own document (a new type appears by itself).
  const doc = (await (await fetch('/openapi.json')).json()) as {
    paths: Record<
      string,
      { get: { parameters: { name: string; schema: { items?: { enum?: string[] } } }[] } }
    >;
  };
  const param = doc.paths['/v1/vault/{vault}/events']?.get.parameters.find((p) => p.name === 'type');
  const select = byId<HTMLSelectElement>('ledger-type');
  for (const t of param?.schema.items?.enum ?? []) select.append(h('option', { value: t }, t));
}

function wire(): void {
  byId('owner-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const owner = byId<HTMLInputElement>('owner').value.trim();
    if (owner && !ADDRESS.test(owner)) {
      report('An owner is an address: 0x followed by 40 hex digits.');
      return;
    }
    clearNotice();
    list.owner = owner;
    list.cursor = undefined;
    loadVaults().catch(report);
  });
  byId('owner-clear').addEventListener('click', () => {
    byId<HTMLInputElement>('owner').value = '';
    list.owner = '';
    loadVaults().catch(report);
  });
  byId('vaults-more').addEventListener('click', () => void loadVaults(true).catch(report));
  byId<HTMLSelectElement>('chain').addEventListener('change', (e) => {
    list.chain = (e.target as HTMLSelectElement).value;
    list.cursor = undefined;
    const params = new URLSearchParams(location.hash.slice(1));
    if (list.chain) params.set('chain', list.chain);
    else params.delete('chain');
    history.replaceState(null, '', `#${params.toString()}`);
    loadVaults().catch(report);
  });
  byId('ledger-form').addEventListener('submit', (e) => {
    e.preventDefault();
    ledger.cursors = [];
    ledger.cursor = undefined;
    loadLedger().catch(report);
  });
  byId<HTMLSelectElement>('time-zone').addEventListener('change', (e) => {
    setZone((e.target as HTMLSelectElement).value === 'local' ? 'local' : 'utc');
    for (const id of ['since-zone', 'until-zone']) byId(id).textContent = zoneLabel();
    if (current.vault) loadLedger().catch(report);
  });
  byId('ledger-older').addEventListener('click', () => {
    if (!ledger.next) return;
    ledger.cursors.push(ledger.cursor);
    ledger.cursor = ledger.next;
    loadLedger().catch(report);
  });
  byId('ledger-newer').addEventListener('click', () => {
    if (ledger.cursors.length === 0) return;
    ledger.cursor = ledger.cursors.pop();
    loadLedger().catch(report);
  });
  byId('tx-form').addEventListener('submit', (e) => {
    e.preventDefault();
    lookupTx(byId<HTMLInputElement>('tx-hash').value.trim()).catch(report);
  });
  byId('refresh').addEventListener('click', () => {
    if (current.vault) void Promise.all([loadSnapshot(), loadEquity()]).catch(report);
  });
  let resizing: number | undefined;
  window.addEventListener('resize', () => {
    clearTimeout(resizing);
    resizing = window.setTimeout(() => {
      const box = byId('equity');
      chart?.setSize({ width: Math.max(280, box.clientWidth), height: 240 });
    }, 100);
  });
}

wire();
Promise.all([
  loadTypes(),
  // The chain filter is a convenience: the list loads without it.
  loadChains()
    .catch(report)
    .then(() => loadVaults()),
])
  .then(() => document.body.setAttribute('data-ready', 'true'))
  .catch(report);
