/**
 * Fold ceiling: the projector's own CPU per record with no Kafka and no Postgres — what one core
 * spends to decode a record from its bytes, fold it and build the rows the projector writes
 * (ledger row, equity point, body; each touched vault's snapshot once per batch). Its inverse
 * bounds bench:projector from above per core, however fast Kafka and Postgres are.
 *
 * It also prices the record format: the same records with their static metadata left out (token
 * symbol, decimals, feed, heartbeat; pool venue, fee tier, token0/1 — what a per-vault header
 * could carry once, see #14), parsed as JSON, against the full records.
 *
 * BENCH_RECORDS (default 200,000) generated records of BENCH_VAULTS (default 1,000) vaults,
 * BENCH_BATCH (default 7,500: records per partition batch of 4 MiB at ≈ 560 B a binary record),
 * BENCH_RECORDS_PER_VAULT_BLOCK (default 1: a busy vault's records per block, see log-fixture.ts).
 * Each stage runs over all records BENCH_ROUNDS (default 3) times; the best round counts.
 * Each stage runs on JSON records and on their binary encoding (the log's; see records/binary.ts).
 * Then `fold-ceiling: <records/s> records/s` (binary records: decode + fold + rows on one core), and
 * last `fold-alloc: B bytes a record (R × floor: valuation V B + records D B; T µs)`: what that path
 * allocates on V8's heap per record, from V8's own heap statistics at every collection
 * (v8.GCProfiler) — deterministic, unlike RSS or time — against the two floors below (#47: R ≤
 * 2.0). BENCH_ALLOC_PROFILE=true also prints where it is allocated, by function (V8's sampling
 * heap profiler, collected objects included), before that line. Before it
 * too, two floors of that figure for this design: what exact valuation alone allocates (every
 * record's vault valued in bigint as the fold values it, checked equal, with nothing else
 * allocating), and what the decoded record objects hold (retained between full collections).
 */

import { Session } from 'node:inspector/promises';
import { GCProfiler, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  type DecodeResult,
  decodeBinaryRecord,
  decodeRecord,
  encodeBinaryRecord,
  equityPoint,
  getSqrtRatioAtTick,
  type Micros,
  parseFixed,
  tokenValue,
  type VaultRecord,
  type VaultState,
} from '@vault-yield/domain';
import { bodyOf, foldStep, ledgerRow, offLedger, positionOf, snapshotRow } from '@vault-yield/projector';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { PER_VAULT_BLOCK } from './log-fixture.js';

const RECORDS = Number(process.env.BENCH_RECORDS ?? 200_000);
const VAULTS = Number(process.env.BENCH_VAULTS ?? 1_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 7_500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** The record as a per-vault header would leave it: only what moves from block to block. */
function slim(r: VaultRecord): unknown {
  const c = r.context;
  return {
    ...r,
    context: {
      tokens: c.tokens.map((t) => ({
        address: t.address,
        priceUsd: t.priceUsd,
        priceUpdatedAt: t.priceUpdatedAt,
      })),
      pools: c.pools.map((p) => ({ address: p.address, sqrtPriceX96: p.sqrtPriceX96, tick: p.tick })),
      holdings: c.holdings,
    },
  };
}

/**
 * Bytes `run` allocates on V8's heap: the used heap's growth between collections, summed — before
 * each collection less after the one before (GCProfiler's heap statistics), plus the growth after
 * the last. Objects that die young count as much as the ones kept: allocation is what costs.
 */
function allocated(run: () => void): number {
  const profiler = new GCProfiler();
  const before = getHeapStatistics().used_heap_size;
  profiler.start();
  run();
  const data = profiler.stop();
  const after = getHeapStatistics().used_heap_size;
  let bytes = 0;
  let last = before;
  for (const gc of data?.statistics ?? []) {
    bytes += gc.beforeGC.heapStatistics.usedHeapSize - last;
    last = gc.afterGC.heapStatistics.usedHeapSize;
  }
  return bytes + after - last;
}

interface SampledNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SampledNode[];
}

/** Bytes `run` allocates per function (sampled every 256 bytes, objects already collected counted). */
async function allocationsByFunction(run: () => void): Promise<[string, number][]> {
  const session = new Session();
  session.connect();
  try {
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 256,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    } as never);
    run();
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as {
      profile: { head: SampledNode };
    };
    const byFn = new Map<string, number>();
    const walk = (n: SampledNode) => {
      const where = `${n.callFrame.url.replace(/^.*\/(packages|services|bench)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;
      const key = `${n.callFrame.functionName || '(anonymous)'} ${where}`;
      byFn.set(key, (byFn.get(key) ?? 0) + n.selfSize);
      for (const c of n.children) walk(c);
    };
    walk(profile.head);
    return [...byFn].sort((a, b) => b[1] - a[1]);
  } finally {
    session.disconnect();
  }
}

/** A figure of the record kept parsed, parsed again only when its text changes (written in place). */
interface Parsed {
  text: string;
  value: bigint;
}

const cell = (text: string, parse: (text: string) => bigint = BigInt): Parsed => ({
  text,
  value: parse(text),
});

/** `c` holding `text` parsed by `parse`: its value. */
function reparse(c: Parsed, text: string, parse: (text: string) => bigint = BigInt): bigint {
  if (c.text !== text) {
    c.text = text;
    c.value = parse(text);
  }
  return c.value;
}

/** `cells[key]` (made when absent) holding `text` parsed by `parse`: its value. */
function parsed(
  cells: Map<string, Parsed>,
  key: string,
  text: string,
  parse: (text: string) => bigint = BigInt,
): bigint {
  const c = cells.get(key);
  if (c) return reparse(c, text, parse);
  const made = cell(text, parse);
  cells.set(key, made);
  return made.value;
}

/** What the exact valuation keeps of a position while its range stays. */
interface KernelPosition {
  lower: number;
  upper: number;
  a: bigint;
  b: bigint;
  liquidity: Parsed;
  owed0: Parsed;
  owed1: Parsed;
}

/** What the exact valuation keeps of a vault between records: every figure parsed, by its text. */
interface KernelVault {
  prices: Map<string, Parsed>;
  pools: Map<string, Parsed>;
  balances: Map<string, Parsed>;
  rewards: Map<string, Parsed>;
  positions: Map<string, KernelPosition>;
}

/**
 * The allocation floor of exact valuation: each record's vault valued from its holdings as the
 * fold values it (every term rounded half-even, the periphery's amounts), with nothing but the
 * bigint steps themselves allocating — every figure kept parsed and parsed again only when its
 * text changed, caches written in place; no maps of the state, no states, no rows. Any fold that
 * values exactly in bigint allocates at least this on these records.
 */
function valuationKernel(records: readonly VaultRecord[]): bigint {
  const vaults = new Map<string, KernelVault>();
  let total = 0n;
  for (const r of records) {
    let v = vaults.get(r.vault);
    if (!v) {
      v = {
        prices: new Map(),
        pools: new Map(),
        balances: new Map(),
        rewards: new Map(),
        positions: new Map(),
      };
      vaults.set(r.vault, v);
    }
    const c = r.context;
    let value = kernelAmounts(v, c, v.balances, c.holdings.balances);
    value += kernelAmounts(v, c, v.rewards, c.holdings.pendingRewards);
    for (const h of c.holdings.positions) {
      let k = v.positions.get(h.id);
      if (!k || k.lower !== h.tickLower || k.upper !== h.tickUpper) {
        k = {
          lower: h.tickLower,
          upper: h.tickUpper,
          a: getSqrtRatioAtTick(h.tickLower),
          b: getSqrtRatioAtTick(h.tickUpper),
          liquidity: cell(h.liquidity),
          owed0: cell(h.owed0),
          owed1: cell(h.owed1),
        };
        v.positions.set(h.id, k);
      }
      let pool = c.pools[0]!;
      for (const x of c.pools) if (x.address === h.pool) pool = x;
      const p = parsed(v.pools, pool.address, pool.sqrtPriceX96);
      const l = reparse(k.liquidity, h.liquidity);
      const { a, b } = k;
      let amount0 = 0n;
      let amount1 = 0n;
      if (p <= a) amount0 = ((l << 96n) * (b - a)) / b / a;
      else if (p < b) {
        amount0 = ((l << 96n) * (b - p)) / b / p;
        amount1 = (l * (p - a)) >> 96n;
      } else amount1 = (l * (b - a)) >> 96n;
      value +=
        kernelValue(v, c, pool.token0, amount0 + reparse(k.owed0, h.owed0)) +
        kernelValue(v, c, pool.token1, amount1 + reparse(k.owed1, h.owed1));
    }
    total += value;
  }
  return total;
}

type Context = VaultRecord['context'];

/** `raw` of `token` valued at the record's price (the kernel's one rounding a term). */
function kernelValue(v: KernelVault, c: Context, token: string, raw: bigint): bigint {
  for (const t of c.tokens)
    if (t.address === token)
      return tokenValue(raw, t.decimals, parsed(v.prices, token, t.priceUsd, parseFixed));
  throw new Error(`token ${token} is not in the context`);
}

/** Σ of a record's token amounts valued (the kernel's balances or pending rewards, kept in `cells`). */
function kernelAmounts(
  v: KernelVault,
  c: Context,
  cells: Map<string, Parsed>,
  list: Context['holdings']['balances'],
): bigint {
  let value = 0n;
  for (const a of list) {
    const raw = parsed(cells, a.token, a.amount);
    if (raw !== 0n) value += kernelValue(v, c, a.token, raw);
  }
  return value;
}

/** Best of ROUNDS: µs per record of `run` over every record. */
function time(run: () => void): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    run();
    best = Math.min(best, ((performance.now() - t0) * 1000) / RECORDS);
  }
  return best;
}

setFlagsFromString('--expose-gc');

async function main() {
  const gen = createHistoryGenerator({ vaults: VAULTS, seed: 11, recordsPerVaultBlock: PER_VAULT_BLOCK });
  const records = gen.take(RECORDS);
  const bytes = records.map((r) => Buffer.from(JSON.stringify(r)));
  const slimBytes = records.map((r) => Buffer.from(JSON.stringify(slim(r))));
  const binBytes = records.map((r) => encodeBinaryRecord(r));
  const avg = (list: Buffer[]) => Math.round(list.reduce((a, b) => a + b.byteLength, 0) / list.length);
  console.log(
    `${RECORDS} records of ${VAULTS} vaults: ${avg(bytes)} bytes a record, ${avg(slimBytes)} without static ` +
      `metadata, ${avg(binBytes)} binary`,
  );

  let sink = 0;
  const parse = time(() => {
    for (const b of bytes) sink += (JSON.parse(b.toString('utf8')) as { logIndex: number }).logIndex;
  });
  const parseSlim = time(() => {
    for (const b of slimBytes) sink += (JSON.parse(b.toString('utf8')) as { logIndex: number }).logIndex;
  });
  /** Times decoding every one of `list` into `into` (kept, as a batch keeps its records). */
  const decodeInto = (list: Buffer[], into: VaultRecord[], decode: (b: Buffer) => DecodeResult) =>
    time(() => {
      into.length = 0;
      for (const b of list) {
        const d = decode(b);
        if (!d.ok) throw new Error(`generated record refused: ${d.reason}`);
        into.push(d.record);
      }
    });
  const decoded: VaultRecord[] = [];
  const decode = decodeInto(bytes, decoded, decodeRecord);
  const fold = time(() => {
    const states = new Map<string, VaultState>();
    for (const r of decoded) {
      const step = foldStep(states.get(r.vault) ?? null, r);
      if (!step.ok) throw new Error(`generated record refused by the fold: ${step.reason}`);
      states.set(r.vault, step.state);
    }
    sink += states.size;
  });
  // Fold and rows together, as applyBatch does per batch: equity and ledger rows and bodies per
  // record, one snapshot row per vault the batch touched.
  // Binary bodies would be framed by length in a bundle, not by line: kept as read.
  const foldRows =
    (decoded: VaultRecord[], bytes: Buffer[], binary = false) =>
    () => {
      const states = new Map<string, { state: VaultState; micros: Micros | null }>();
      for (let from = 0; from < decoded.length; from += BATCH) {
        const touched = new Map<string, VaultRecord>();
        for (let i = from; i < Math.min(from + BATCH, decoded.length); i++) {
          const r = decoded[i]!;
          const before = states.get(r.vault);
          const step = foldStep(before?.state ?? null, r);
          if (!step.ok) throw new Error(step.reason);
          // As the projector: equity points at block ends only.
          const point = r.lastInBlock ? equityPoint(before?.micros ?? null, step.state) : null;
          states.set(r.vault, { state: step.state, micros: point ? point.micros : (before?.micros ?? null) });
          sink +=
            (offLedger(r) ? 0 : ledgerRow(r).payload.length) +
            (binary ? bytes[i]! : bodyOf(r, bytes[i])).byteLength +
            (point?.row ? 1 : 0);
          touched.set(r.vault, r);
        }
        for (const [vault, last] of touched)
          sink += snapshotRow(states.get(vault)!.state, String(last.seq), positionOf(last)).state.length;
      }
    };
  const rows = time(foldRows(decoded, bytes));
  // The binary stages with the JSON records gone: a heap holding both sets slows whatever runs second.
  const lastJson = JSON.stringify(decoded[RECORDS - 1]);
  decoded.length = 0;
  const decodedBin: VaultRecord[] = [];
  const decodeBin = decodeInto(binBytes, decodedBin, decodeBinaryRecord);
  if (JSON.stringify(decodedBin[RECORDS - 1]) !== lastJson) throw new Error('binary and JSON decode differ');
  const rowsBin = time(foldRows(decodedBin, binBytes, true));
  const total = decode + rows;
  const totalBin = decodeBin + rowsBin;
  const f = (us: number) => `${us.toFixed(1)} µs`;
  console.log(`JSON.parse: ${f(parse)} a record; without static metadata ${f(parseSlim)}`);
  console.log(`decode (parse + validate): ${f(decode)}; fold: ${f(fold)}; fold + rows: ${f(rows)}`);
  console.log(`JSON records: decode + fold + rows ${f(total)} a record on one core (sink ${sink % 10})`);
  console.log(
    `binary records (the log's encoding): decode ${f(decodeBin)}; fold + rows ${f(rowsBin)}; together ${f(totalBin)}`,
  );
  console.log(`fold-ceiling: ${Math.round(1e6 / totalBin)} records/s`);
  // The same path once more, its allocation counted: decode (the batch keeps its records), fold, rows.
  const binaryPath = () => {
    decodedBin.length = 0;
    for (const b of binBytes) {
      const d = decodeBinaryRecord(b);
      if (!d.ok) throw new Error(d.reason);
      decodedBin.push(d.record);
    }
    foldRows(decodedBin, binBytes, true)();
  };
  if (process.env.BENCH_ALLOC_PROFILE === 'true') {
    const top = await allocationsByFunction(binaryPath);
    console.log('allocated per record, by function (sampled):');
    for (const [fn, bytes] of top.slice(0, 25))
      console.log(`  ${String(Math.round(bytes / RECORDS)).padStart(6)} B  ${fn}`);
  }
  // The floor of that allocation any exact (bigint) valuation leaves, whatever else is rewritten:
  // the kernel values every record as the fold does (Σ of the values checked against the fold's).
  let kernelTotal = 0n;
  const kernelBytes = allocated(() => {
    kernelTotal = valuationKernel(decodedBin);
  });
  let foldTotal = 0n;
  const states = new Map<string, VaultState>();
  for (const r of decodedBin) {
    const step = foldStep(states.get(r.vault) ?? null, r);
    if (!step.ok) throw new Error(step.reason);
    states.set(r.vault, step.state);
    foldTotal += step.state.valueUsd;
  }
  if (kernelTotal !== foldTotal) throw new Error(`valuation kernel ${kernelTotal} ≠ fold ${foldTotal}`);
  const kernelTime = time(() => {
    kernelTotal = valuationKernel(decodedBin);
  });
  console.log(
    `exact valuation alone (every record valued as the fold values it, figures parsed when they ` +
      `change, nothing else): ${Math.round(kernelBytes / RECORDS)} bytes a record (${f(kernelTime)} a record)`,
  );
  // And what the decoded records themselves hold (retained, between full collections; the second
  // of two passes, when the first's garbage and the decoder's string table are settled): a
  // decoder that builds these objects allocates at least this much.
  const gc = runInNewContext('gc') as () => void;
  let held = 0;
  for (let pass = 0; pass < 2; pass++) {
    decodedBin.length = 0;
    gc();
    const empty = getHeapStatistics().used_heap_size;
    for (const b of binBytes) {
      const d = decodeBinaryRecord(b);
      if (d.ok) decodedBin.push(d.record);
    }
    gc();
    held = getHeapStatistics().used_heap_size - empty;
  }
  console.log(`decoded records hold ${Math.round(held / RECORDS)} bytes a record (retained; strings shared)`);
  const bytesAllocated = allocated(binaryPath);
  // Judged against the two floors of this design (#47: R ≤ 2.0), measured above in this run.
  const perRecord = Math.round(bytesAllocated / RECORDS);
  const valuation = Math.round(kernelBytes / RECORDS);
  const recordsHeld = Math.round(held / RECORDS);
  console.log(
    `fold-alloc: ${perRecord} bytes a record (${(perRecord / (valuation + recordsHeld)).toFixed(2)} × floor: ` +
      `valuation ${valuation} B + records ${recordsHeld} B; ${f(totalBin)})`,
  );
}

await main();
