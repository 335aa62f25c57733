import { randomBytes } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import { PROJECTOR_BATCH_DEFAULTS } from '@vault-yield/projector';
import { createPgPool, ident } from '@vault-yield/store';
import { Kafka, logLevel } from 'kafkajs';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { type MachineCpu, machineCpu } from './proc.js';

/**
 * The floor of a fold bench (#30): what the parts we did not write cost for the same work, measured
 * in the same run as the bench, as CPU of the whole machine (every process: the broker, Postgres,
 * this one) per record:
 * - consume: the topic read from the start by a kafkajs consumer with the projector's fetch
 *   settings and an empty batch handler (offsets resolved, nothing decoded);
 * - copy: the rows the fold left in `schema`, copied out beforehand (binary COPY, untimed), then
 *   COPYed into empty tables of the same shape — indexes, constraints — in a scratch schema
 *   (`unlogged` for a rebuild's build schema). The snapshot table holds each vault's last row, not
 *   one per batch: the floor writes at most what the fold wrote.
 * A ratio of the bench's machine CPU per record to this floor moves little with the machine's day.
 */
export interface Floor {
  /** Machine CPU per record, µs: consuming with an empty handler. */
  consumeUs: number;
  /** Machine CPU per record, µs: COPYing the rows. */
  copyUs: number;
  /** consumeUs + copyUs. */
  us: number;
  /** Rows copied, bytes of binary COPY data. */
  rows: number;
  bytes: number;
}

const busySince = (before: MachineCpu | null): number => {
  const after = machineCpu();
  return before && after ? after.busy - before.busy : Number.NaN;
};

export async function measureFloor(o: {
  brokers: readonly string[];
  topic: string;
  records: number;
  /** A URL that may create and drop a schema in the bench database. */
  url: string;
  schema: string;
  unlogged?: boolean;
}): Promise<Floor> {
  // Consume: an empty handler, the projector's fetch sizes.
  const kafka = new Kafka({ brokers: [...o.brokers], clientId: 'bench-floor', logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({
    groupId: `bench-floor-${randomBytes(4).toString('hex')}`,
    maxBytesPerPartition: PROJECTOR_BATCH_DEFAULTS.maxBatchBytes,
    maxBytes: 4 * PROJECTOR_BATCH_DEFAULTS.maxBatchBytes,
    maxWaitTimeInMs: 250,
  });
  await consumer.connect();
  await consumer.subscribe({ topic: o.topic, fromBeginning: true });
  let seen = 0;
  const c0 = machineCpu();
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        autoCommit: false,
        partitionsConsumedConcurrently: PROJECTOR_BATCH_DEFAULTS.concurrency,
        eachBatchAutoResolve: false,
        eachBatch: async ({ batch, resolveOffset }) => {
          seen += batch.messages.length;
          const last = batch.messages.at(-1);
          if (last) resolveOffset(last.offset);
          if (seen >= o.records) resolve();
        },
      })
      .catch(reject);
  });
  const consumeBusy = busySince(c0);
  await consumer.disconnect();

  // Copy: the fold's rows, out beforehand, into empty tables of the same shape.
  const pool = createPgPool({ url: o.url, applicationName: 'bench-floor', max: 1 });
  const scratch = `bench_floor_${randomBytes(4).toString('hex')}`;
  const client = await pool.connect();
  try {
    const { rows: tables } = await client.query<{ name: string }>(
      `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = $1 and c.relkind = 'r' and c.reltuples <> 0 order by c.relname`,
      [o.schema],
    );
    const data: { name: string; chunks: Buffer[]; rows: number }[] = [];
    let bytes = 0;
    let rows = 0;
    for (const { name } of tables) {
      const chunks: Buffer[] = [];
      const out = client.query(copyTo(`copy ${ident(o.schema)}.${ident(name)} to stdout (format binary)`));
      for await (const chunk of out) chunks.push(chunk as Buffer);
      const n = Number(
        (
          await client.query<{ n: string }>(
            `select count(*)::text as n from ${ident(o.schema)}.${ident(name)}`,
          )
        ).rows[0]?.n ?? 0,
      );
      if (n === 0) continue;
      data.push({ name, chunks, rows: n });
      rows += n;
      bytes += chunks.reduce((a, b) => a + b.byteLength, 0);
    }
    await client.query(`create schema ${ident(scratch)}`);
    for (const { name } of data)
      await client.query(
        `create ${o.unlogged ? 'unlogged ' : ''}table ${ident(scratch)}.${ident(name)} (like ${ident(o.schema)}.${ident(name)} including all)`,
      );
    const k0 = machineCpu();
    for (const { name, chunks } of data)
      await pipeline(
        (async function* () {
          yield* chunks;
        })(),
        client.query(copyFrom(`copy ${ident(scratch)}.${ident(name)} from stdin (format binary)`)),
      );
    const copyBusy = busySince(k0);
    const per = (s: number) => (s * 1e6) / o.records;
    return {
      consumeUs: per(consumeBusy),
      copyUs: per(copyBusy),
      us: per(consumeBusy + copyBusy),
      rows,
      bytes,
    };
  } finally {
    await client.query(`drop schema if exists ${ident(scratch)} cascade`).catch(() => {});
    client.release();
    await pool.end();
  }
}

/** `<name>: R × floor (A µs a record in all, floor F µs)`, the line #30's benches end with. */
export function floorLine(name: string, allUs: number, floor: Floor): string {
  return (
    `${name}: ${(allUs / floor.us).toFixed(2)} × floor (${allUs.toFixed(1)} µs a record in all, ` +
    `floor ${floor.us.toFixed(1)} µs: consume ${floor.consumeUs.toFixed(1)}, copy ${floor.copyUs.toFixed(1)})`
  );
}
