import { readFileSync } from 'node:fs';

/**
 * CPU seconds (user + system) a process (or, with `path`, a thread) has used, from /proc: NaN
 * where there is no /proc or no pid, 0 for a process that is gone (its time is no longer readable).
 */
export function cpuSeconds(pid: number, path = `/proc/${pid}/stat`): number {
  if (!Number.isInteger(pid)) return Number.NaN;
  let stat: string;
  try {
    stat = readFileSync(path, 'utf8');
  } catch {
    return readable() ? 0 : Number.NaN;
  }
  // utime and stime are fields 14 and 15 of stat, 12 and 13 after "pid (comm) " (comm may hold spaces).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const readable = () => {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
};

/** Peak resident set size of a process in bytes (VmHWM), 0 when unknown. */
export function peakRss(pid: number): number {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The whole machine's CPU time so far, from /proc/stat (every process, every core). */
export interface MachineCpu {
  /** Seconds of CPU spent busy (all but idle and iowait), summed over the cores. */
  busy: number;
  /** Seconds of CPU in all (busy + idle), summed over the cores. */
  total: number;
  cores: number;
}

/** A reading of the machine's CPU, or null where there is no /proc/stat. */
export function machineCpu(): MachineCpu | null {
  let stat: string;
  try {
    stat = readFileSync('/proc/stat', 'utf8');
  } catch {
    return null;
  }
  const lines = stat.split('\n');
  // "cpu  user nice system idle iowait irq softirq steal …" in USER_HZ (100 a second).
  const f = (lines[0] ?? '').trim().split(/\s+/).slice(1, 9).map(Number);
  if (f.length < 8 || f.some((n) => !Number.isFinite(n))) return null;
  const total = f.reduce((a, n) => a + n, 0) / 100;
  const idle = (f[3]! + f[4]!) / 100;
  const cores = lines.filter((l) => /^cpu\d+ /.test(l)).length;
  return { busy: total - idle, total, cores };
}

/**
 * What the whole machine spent on `records` between two readings: how busy its cores were, CPU
 * per record counting every process (the bench's, the node's, the broker's, Postgres'…), and the
 * rate that CPU per record would allow with every core busy — the ceiling of this bench on this
 * machine, whatever the pipeline's shape.
 */
export function machineLine(before: MachineCpu | null, after: MachineCpu | null, records: number): string {
  if (!before || !after || records <= 0) return 'machine: n/a (no /proc/stat)';
  const busy = after.busy - before.busy;
  const total = after.total - before.total;
  const perRecord = busy / records;
  return (
    `machine: ${after.cores} cores ${((100 * busy) / Math.max(total, 1e-9)).toFixed(0)} % busy; ` +
    `${(perRecord * 1e6).toFixed(1)} µs of CPU a record, every process counted → ` +
    `at most ${Math.round(after.cores / perRecord)} records/s with every core busy`
  );
}
