import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import { createLogAdmin, createPublisher } from '@vault-yield/log';
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

/**
 * The indexer's floor (#30 item 4), as CPU of this process (every thread) per record:
 * - produce: the records the backfill published, read back from `topic` beforehand (untimed), produced
 *   again to a scratch topic by the publisher (`@vault-yield/log`'s: idempotent, acks -1, the same
 *   request sizes) in batches of `batch`;
 * - parse: every answer of the node the backfill received, as recorded by bench/rpc-replay.ts in
 *   `answers` (one line per distinct call), JSON-parsed in its envelope — only with a recording.
 * What the indexer does on top (decoding logs, valuing, encoding records, planning ranges, the
 * write-ahead) is ours.
 */
export interface IndexerFloor {
  produceUs: number;
  /** NaN without a recording of the node's answers. */
  parseUs: number;
  us: number;
  records: number;
}

export async function measureIndexerFloor(o: {
  brokers: readonly string[];
  topic: string;
  answers?: string;
  batch?: number;
}): Promise<IndexerFloor> {
  const kafka = new Kafka({ brokers: [...o.brokers], clientId: 'bench-floor', logLevel: logLevel.NOTHING });
  const admin = await createLogAdmin({ brokers: [...o.brokers], clientId: 'bench-floor' });
  let total = 0;
  for (const p of await admin.offsets(o.topic)) total += Number(BigInt(p.high) - BigInt(p.low));
  const messages: { key: Buffer | null; value: Buffer | null }[] = [];
  const consumer = kafka.consumer({ groupId: `bench-floor-${randomBytes(4).toString('hex')}` });
  await consumer.connect();
  await consumer.subscribe({ topic: o.topic, fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    consumer
      .run({
        eachBatch: async ({ batch }) => {
          for (const m of batch.messages) messages.push({ key: m.key, value: m.value });
          if (messages.length >= total) resolve();
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();

  const scratch = `${o.topic}-floor`;
  await admin.ensureTopic({ topic: scratch, partitions: 4 });
  const publisher = await createPublisher({
    brokers: [...o.brokers],
    clientId: 'bench-floor',
    topic: scratch,
  });
  const batch = o.batch ?? 5_000;
  const c0 = process.cpuUsage();
  for (let i = 0; i < messages.length; i += batch) await publisher.publishRaw(messages.slice(i, i + batch));
  const produced = process.cpuUsage(c0);
  await publisher.close();
  await admin.deleteTopic(scratch).catch(() => {});
  await admin.close();

  let parseSeconds = Number.NaN;
  if (o.answers) {
    // Read line by line (the whole file may be longer than a string can be), untimed.
    const bodies: string[] = [];
    const lines = createInterface({
      input: createReadStream(o.answers),
      crlfDelay: Number.POSITIVE_INFINITY,
    });
    for await (const line of lines) {
      const tab = line.indexOf('\t');
      if (tab > 0) bodies.push(`{"jsonrpc":"2.0","id":1,${line.slice(tab + 1)}}`);
    }
    const p0 = process.cpuUsage();
    let ids = 0;
    for (const body of bodies) ids += (JSON.parse(body) as { id: number }).id;
    const parsed = process.cpuUsage(p0);
    if (ids !== bodies.length) throw new Error('invariant: a recorded answer lost its envelope');
    parseSeconds = (parsed.user + parsed.system) / 1e6;
  }
  const per = (s: number) => (s * 1e6) / messages.length;
  const produceUs = per((produced.user + produced.system) / 1e6);
  const parseUs = per(parseSeconds);
  return {
    produceUs,
    parseUs,
    us: produceUs + (Number.isNaN(parseUs) ? 0 : parseUs),
    records: messages.length,
  };
}
