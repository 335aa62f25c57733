import { parseArgs } from 'node:util';
import { decodeRecord, encodingOf } from '@vault-yield/domain';
import { createBatchConsumer, createLogAdmin, type LogMessage } from '@vault-yield/log';
import type { Command } from '../command.js';
import { logEnvSchema } from '../config.js';
import { failure } from '../ops/env.js';

const help = `usage: vault-yield log tail [--last N] [--partition P [--from-offset O]] [--vault 0x…] [--follow] [--topic NAME]

Prints records of the event log as JSON, one line each, whatever their encoding (records are
binary by default, JSON in logs written before; see RECORD_ENCODING):
  {"partition":P,"offset":"O","encoding":"binary"|"json","record":{…}}
A record that does not decode prints its reason and its bytes in hex instead of "record":
  {"partition":P,"offset":"O","error":"…","valueHex":"…"}

options:
  --last N          the last N records of each partition (default 10)
  --partition P     only partition P
  --from-offset O   from offset O of --partition (instead of --last)
  --vault 0x…       only this vault's records (its key)
  --follow          keep printing records as they arrive, until interrupted
  --topic NAME      the topic (default $KAFKA_TOPIC, else vault-records)

A topic that does not exist: one line naming it, exit 1.

environment:
  KAFKA_BROKERS (required), KAFKA_TOPIC, KAFKA_SASL_*, KAFKA_SSL, KAFKA_SSL_CA_FILE, LOG_LEVEL`;

const natural = /^(0|[1-9]\d{0,17})$/;

/** One line of output for a message of the log. */
export function tailLine(m: Pick<LogMessage<unknown>, 'partition' | 'offset' | 'value'>): string {
  const d = decodeRecord(m.value);
  if (!d.ok)
    return JSON.stringify({
      partition: m.partition,
      offset: m.offset,
      error: d.reason,
      valueHex: m.value?.toString('hex') ?? null,
    });
  // A decoded record has a value.
  const encoding = encodingOf(m.value as Buffer);
  return JSON.stringify({ partition: m.partition, offset: m.offset, encoding, record: d.record });
}

const parse = (argv: string[]) =>
  parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      last: { type: 'string' },
      partition: { type: 'string' },
      'from-offset': { type: 'string' },
      vault: { type: 'string' },
      follow: { type: 'boolean' },
      topic: { type: 'string' },
    },
  });

export const logCommand: Command<typeof logEnvSchema> = {
  env: logEnvSchema,
  log: { name: 'log' },
  help,
  async run(argv, context) {
    const fail = (message: string) => {
      console.error(`log: ${message}\n\n${help}`);
      return 2;
    };
    let parsed: ReturnType<typeof parse>;
    try {
      parsed = parse(argv);
    } catch (err) {
      return fail((err as Error).message);
    }
    const { values, positionals } = parsed;
    if (positionals[0] !== 'tail') return fail(`expected \`tail\`, got ${positionals[0] ?? 'nothing'}`);
    for (const name of ['last', 'partition', 'from-offset'] as const) {
      const v = values[name];
      if (v !== undefined && !natural.test(v))
        return fail(`--${name} must be a non-negative integer, got ${v}`);
    }
    if (values['from-offset'] !== undefined && values.partition === undefined)
      return fail('--from-offset needs --partition');
    if (values.vault !== undefined && !/^0x[0-9a-fA-F]{40}$/.test(values.vault))
      return fail(`--vault must be a 0x-prefixed 20-byte address, got ${values.vault}`);
    const last = BigInt(values.last ?? 10);
    const only = values.partition === undefined ? undefined : Number(values.partition);
    const vault = values.vault?.toLowerCase();

    const { config: env, kafka, log } = context();
    const topic = values.topic ?? env.KAFKA_TOPIC;
    const client = {
      ...kafka!,
      logger: log,
      // The command reports a failure in one line: the client's retries are debug detail.
      kafkaLinesAtDebug: true,
    };
    const admin = await createLogAdmin({ ...client, clientId: 'vault-yield-log' });
    let offsets: Awaited<ReturnType<typeof admin.offsets>>;
    try {
      // A missing topic would be retried by the client, then thrown as a protocol error.
      if (!(await admin.listTopics()).includes(topic))
        throw failure(
          `topic ${topic} does not exist on KAFKA_BROKERS ${env.KAFKA_BROKERS.join(',')}: ` +
            `${values.topic === undefined ? 'KAFKA_TOPIC (default vault-records)' : '--topic'} names a topic the broker does not hold; check the name (and the brokers)`,
        );
      offsets = await admin.offsets(topic);
    } finally {
      await admin.close();
    }
    if (only !== undefined && !offsets.some((o) => o.partition === only))
      return fail(`topic ${topic} has no partition ${only}`);
    const start = new Map<number, string>();
    const end = new Map<number, bigint>();
    for (const o of offsets) {
      if (only !== undefined && o.partition !== only) continue;
      const low = BigInt(o.low);
      const high = BigInt(o.high);
      const from = values['from-offset'] !== undefined ? BigInt(values['from-offset']) : high - last;
      start.set(o.partition, (from < low ? low : from > high ? high : from).toString());
      end.set(o.partition, high);
    }
    // Without --follow: done once every partition read reached the high-water mark seen at start.
    const pending = new Set([...end].filter(([p, high]) => BigInt(start.get(p)!) < high).map(([p]) => p));
    if (!values.follow && pending.size === 0) return 0;

    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const consumer = createBatchConsumer<null>({
      ...client,
      clientId: 'vault-yield-log',
      // A group of its own, never committed to by anyone else: tailing moves no one's offsets.
      groupId: `vault-yield-log-${process.pid}-${Date.now().toString(36)}`,
      topic,
      decode: () => null,
      storedOffsets: async (_topic, partitions) =>
        new Map(partitions.map((p) => [p, start.get(p) ?? end.get(p)?.toString() ?? '0'])),
      handleBatch: async (batch) => {
        if (only !== undefined && batch.partition !== only) return { applied: true };
        for (const m of batch.messages) {
          const high = end.get(m.partition) ?? 0n;
          if (!values.follow && BigInt(m.offset) >= high) break;
          if (vault === undefined || m.key?.toString('utf8').toLowerCase() === vault)
            console.log(tailLine(m));
        }
        const lastOffset = batch.messages.at(-1)?.offset;
        if (lastOffset !== undefined && BigInt(lastOffset) + 1n >= (end.get(batch.partition) ?? 0n))
          pending.delete(batch.partition);
        if (!values.follow && pending.size === 0) finish();
        return { applied: true };
      },
    });
    const stop = () => finish();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    await consumer.start();
    try {
      await done;
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      await consumer.stop();
    }
    return 0;
  },
};
