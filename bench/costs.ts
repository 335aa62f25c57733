import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { Pool } from '@vault-yield/store';
import { cpuSeconds, machineCpu, machineLine } from './proc.js';

/**
 * What a fold bench costs per record, beside its rate: CPU of the folding processes, of the
 * Postgres backends serving them and of the Kafka broker (found by its loopback port), and the
 * bytes a record takes in Kafka (the topic's segments on disk) and in Postgres (the schema's
 * tables with their indexes and TOAST), and the whole machine's CPU per record since the sampler was
 * made (machineLine). CPU of processes that exit is sampled while they run.
 */
export interface CostSampler {
  /** Reads the CPU of the folding processes and of the database's backends now (call often). */
  sample(): Promise<void>;
  /** The cost lines, per record. */
  report(records: number, schema: string): Promise<string[]>;
}

export function createCostSampler(o: {
  /** A pool on the bench database (its own backend is left out of the count). */
  pool: Pool;
  brokers: readonly string[];
  topic: string;
  /** The folding processes (their pids now). */
  pids: () => readonly number[];
}): CostSampler {
  const machine0 = machineCpu();
  const brokerPid = loopbackListener(o.brokers[0] ?? '');
  const brokerCpu0 = brokerPid ? cpuSeconds(brokerPid) : Number.NaN;
  // Highest CPU seen per pid: a process that has exited reads 0, its last sample stands.
  const folders = new Map<number, number>();
  const backends = new Map<number, number>();
  const keepMax = (m: Map<number, number>, pid: number) => {
    const s = cpuSeconds(pid);
    if (Number.isFinite(s)) m.set(pid, Math.max(m.get(pid) ?? 0, s));
  };
  return {
    async sample() {
      for (const pid of o.pids()) keepMax(folders, pid);
      const { rows } = await o.pool.query<{ pid: number }>(
        'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      );
      for (const r of rows) keepMax(backends, r.pid);
    },
    async report(records, schema) {
      await this.sample();
      const sum = (m: Map<number, number>) => [...m.values()].reduce((a, b) => a + b, 0);
      const us = (cpu: number) => (Number.isFinite(cpu) ? `${((cpu * 1e6) / records).toFixed(1)} µs` : 'n/a');
      const broker = brokerPid ? cpuSeconds(brokerPid) - brokerCpu0 : Number.NaN;
      const kafkaBytes = brokerPid ? topicBytes(brokerPid, o.topic) : Number.NaN;
      const { rows } = await o.pool.query<{ relname: string; bytes: string }>(
        `select c.relname, pg_total_relation_size(c.oid)::text as bytes
           from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = $1 and c.relkind = 'r'
          order by pg_total_relation_size(c.oid) desc`,
        [schema],
      );
      const pgBytes = rows.reduce((a, r) => a + Number(r.bytes), 0);
      const per = (bytes: number) => (Number.isFinite(bytes) ? `${Math.round(bytes / records)} B` : 'n/a');
      const top = rows
        .slice(0, 4)
        .map((r) => `${r.relname} ${per(Number(r.bytes))}`)
        .join(', ');
      return [
        machineLine(machine0, machineCpu(), records),
        `CPU per record: folding ${us(sum(folders))}, Postgres ${us(sum(backends))} (${backends.size} backends), broker ${us(broker)}`,
        `bytes per record: Kafka ${per(kafkaBytes)} (segments on disk), Postgres ${per(pgBytes)} (${top})`,
      ];
    },
  };
}

/** The pid of the process listening on a loopback `host:port` (from /proc), or null. */
export function loopbackListener(hostPort: string): number | null {
  const m = /^(127\.0\.0\.1|localhost|\[?::1\]?):(\d+)$/.exec(hostPort.trim());
  if (!m) return null;
  const port = Number(m[2]);
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT; state 0A is LISTEN; field 9 is the socket inode.
      if (f[3] === '0A' && Number.parseInt(f[1]?.split(':')[1] ?? '', 16) === port && f[9]) inodes.add(f[9]);
    }
  }
  if (inodes.size === 0) return null;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const link = readlinkSync(`/proc/${entry}/fd/${fd}`);
        if (link.startsWith('socket:[') && inodes.has(link.slice(8, -1))) return Number(entry);
      } catch {}
    }
  }
  return null;
}

/** Bytes of a topic's segments on a broker's disk (its log.dirs, read from its properties file). */
function topicBytes(pid: number, topic: string): number {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    // The broker's own argument (JVM options such as -Dlog4j.configuration=… come before it).
    const file = args.filter((a) => !a.startsWith('-') && a.endsWith('.properties')).at(-1);
    if (!file) return Number.NaN;
    const props = readFileSync(isAbsolute(file) ? file : join(cwd, file), 'utf8');
    const dirs = /^log\.dirs?\s*=\s*(.+)$/m.exec(props)?.[1]?.split(',') ?? [];
    let bytes = 0;
    for (const dir of dirs)
      for (const part of readdirSync(dir.trim()))
        if (part.startsWith(`${topic}-`) && /^\d+$/.test(part.slice(topic.length + 1)))
          for (const f of readdirSync(join(dir.trim(), part)))
            if (f.endsWith('.log')) bytes += statSync(join(dir.trim(), part, f)).size;
    return dirs.length > 0 ? bytes : Number.NaN;
  } catch {
    return Number.NaN;
  }
}
