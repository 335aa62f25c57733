/**
 * Fold A/B in one process: the fold of this checkout against the fold of another (BENCH_OLD_TREE,
 * a worktree of the commit to compare with; its `node_modules` may be a link to this one's), on
 * the same generated records, rounds interleaved. On a machine whose speed drifts by ± 30 % from
 * minute to minute (steal, shared cores), two runs of two benches minutes apart compare nothing;
 * rounds interleaved in one process see the same machine.
 *
 * Env: BENCH_OLD_TREE (required), BENCH_RECORDS (default 100,000), BENCH_VAULTS (default 1,000),
 * BENCH_ROUNDS (default 12). Last line: `fold-ab: new N µs, old O µs a record (min; medians …)`.
 */

import { foldRecord, type VaultRecord, type VaultState } from '@vault-yield/domain';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';

const OLD = process.env.BENCH_OLD_TREE;
if (!OLD) throw new Error('BENCH_OLD_TREE: the checkout to compare with');
const RECORDS = Number(process.env.BENCH_RECORDS ?? 100_000);
const VAULTS = Number(process.env.BENCH_VAULTS ?? 1_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);

const old = (await import(`${OLD}/packages/domain/src/fold/evolve.ts`)) as { foldRecord: typeof foldRecord };
const records: VaultRecord[] = createHistoryGenerator({
  vaults: VAULTS,
  seed: 11,
  recordsPerVaultBlock: 1,
}).take(RECORDS);

/** µs a record of folding every record with `fold`. */
function run(fold: typeof foldRecord): number {
  const states = new Map<string, VaultState>();
  const t0 = performance.now();
  for (const r of records) states.set(r.vault, fold(states.get(r.vault), r));
  return ((performance.now() - t0) * 1000) / RECORDS;
}

const mine: number[] = [];
const theirs: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  mine.push(run(foldRecord));
  theirs.push(run(old.foldRecord));
}
const median = (x: number[]) => [...x].sort((p, q) => p - q)[Math.floor(x.length / 2)]!;
const f = (x: number) => x.toFixed(2);
console.log(
  `fold-ab: new ${f(Math.min(...mine))} µs, old ${f(Math.min(...theirs))} µs a record (min; medians ` +
    `${f(median(mine))} and ${f(median(theirs))}; ${RECORDS} records of ${VAULTS} vaults, ${ROUNDS} rounds each)`,
);
