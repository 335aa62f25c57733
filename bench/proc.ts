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
