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
 * last `fold-alloc: B bytes a record (T µs a record)`: what that path allocates on V8's heap per
 * record, from V8's own heap statistics at every collection (v8.GCProfiler) — deterministic, unlike
 * RSS or time (#30: B ≤ 2,048). BENCH_ALLOC_PROFILE=true also prints where it is allocated, by
 * function (V8's sampling heap profiler, collected objects included), before that line.
 */

import { Session } from 'node:inspector/promises';
import { GCProfiler, getHeapStatistics } from 'node:v8';
import {
  type DecodeResult,
  decodeBinaryRecord,
  decodeRecord,
  encodeBinaryRecord,
  equityPoint,
  type Micros,
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
  const bytesAllocated = allocated(binaryPath);
  console.log(`fold-alloc: ${Math.round(bytesAllocated / RECORDS)} bytes a record (${f(totalBin)} a record)`);
}

await main();
