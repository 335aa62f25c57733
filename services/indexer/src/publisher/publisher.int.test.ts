import { createLogger } from '@vault-yield/common';
import {
  decodeRecord,
  encodeBinaryRecord,
  encodeRecordAs,
  SCHEMA_VERSION,
  type VaultRecord,
} from '@vault-yield/domain';
import { createLogAdmin, createPublisher, type LogMessage } from '@vault-yield/log';
import { kafkaBrokers, uniqueTopic } from '@vault-yield/test-kit';
import { readMessages } from '@vault-yield/test-kit/indexer';
import { describe, expect, it } from 'vitest';
import { createThreadedPublisher, encodeBatch } from './index.js';

const brokers = () => kafkaBrokers();
const silent = createLogger({ name: 'publisher-test', level: 'silent' });
const hex = (n: number, len: number) => `0x${n.toString(16).padStart(len, '0')}` as `0x${string}`;

const context = {
  tokens: [
    {
      address: hex(0xa1, 40),
      symbol: 'WETH',
      decimals: 18,
      priceUsd: '3000.5',
      feed: hex(0xfe, 40),
      priceUpdatedAt: 1_700_000_000,
      heartbeat: 3600,
    },
  ],
  pools: [],
  holdings: { balances: [{ token: hex(0xa1, 40), amount: '5' }], positions: [], pendingRewards: [] },
};

/** Record `i` of vault `v`: consecutive blocks, so per-vault order is visible in the payload. */
function record(v: number, i: number): VaultRecord {
  return {
    blockNumber: 100 + i,
    blockHash: hex(0xb000 + i, 64),
    txHash: hex(0x7000 + v * 1000 + i, 64),
    txIndex: v,
    logIndex: i,
    vault: hex(0x1000 + v, 40),
    type: 'deposit',
    payload: { from: hex(0xf0, 40), token: hex(0xa1, 40), amount: String(i) },
    schemaVersion: SCHEMA_VERSION,
    seq: i + 1,
    chainId: 31337,
    blockTimestamp: 1_700_000_000 + i,
    lastInBlock: true,
    context,
  };
}

async function newTopic(): Promise<string> {
  const topic = uniqueTopic('indexer-publisher');
  const admin = await createLogAdmin({ brokers: brokers(), clientId: 'publisher-test' });
  await admin.ensureTopic({ topic, partitions: 4 });
  await admin.close();
  return topic;
}

describe('encodeBatch', () => {
  it.each(['binary', 'json'] as const)(
    "packs the %s encoding's bytes back to back, multi-byte UTF-8 included, in a buffer of its own",
    (encoding) => {
      const wide = { ...context, tokens: [{ ...context.tokens[0]!, symbol: 'WΞTH€😀' }] };
      const records = [record(1, 1), { ...record(2, 2), context: wide }, record(3, 3)];
      const pooled = Buffer.from('a pooled buffer that must survive the transfer');
      const batch = encodeBatch(records, encoding);
      const expected = records.map((r) => encodeRecordAs(r, encoding));
      expect(expected.map((b) => decodeRecord(b))).toEqual(records.map((record) => ({ ok: true, record })));
      expect(Buffer.from(batch.bytes)).toEqual(Buffer.concat(expected));
      expect([...batch.offsets]).toEqual([
        0,
        ...expected.map((_, i) => Buffer.concat(expected.slice(0, i + 1)).length),
      ]);
      expect(batch.keys).toEqual(records.map((r) => r.vault));
      // A small batch must not sit on Node's shared allocation pool: transferring it detaches it.
      structuredClone(batch.bytes, { transfer: [batch.bytes] });
      expect(pooled.toString()).toBe('a pooled buffer that must survive the transfer');
    },
  );
});

describe('publisher thread', () => {
  it('publishes what the in-process publisher publishes: same bytes, keys, partitions and order', async () => {
    const batches = [0, 1, 2].map((b) => {
      const records: VaultRecord[] = [];
      for (let i = b * 40; i < (b + 1) * 40; i++) for (let v = 0; v < 25; v++) records.push(record(v, i));
      return records;
    });
    const [threadedTopic, inProcessTopic] = await Promise.all([newTopic(), newTopic()]);

    const threaded = await createThreadedPublisher({
      brokers: brokers(),
      clientId: 'publisher-test',
      topic: threadedTopic,
      logger: silent,
    });
    for (const b of batches) await threaded.publish(b);
    await threaded.close();
    const inProcess = await createPublisher({
      brokers: brokers(),
      clientId: 'publisher-test',
      topic: inProcessTopic,
    });
    for (const b of batches) await inProcess.publish(b);
    await inProcess.close();

    const total = batches.flat().length;
    const [a, b] = await Promise.all([
      readMessages(brokers(), threadedTopic),
      readMessages(brokers(), inProcessTopic),
    ]);
    const view = (ms: LogMessage<null>[]) =>
      ms.map((m) => ({ partition: m.partition, key: m.key?.toString(), value: m.value?.toString('hex') }));
    expect(a).toHaveLength(total);
    expect(view(a)).toEqual(view(b));
    // The bytes are the binary encoding's (both publishers' default), and each vault's records
    // come in publication order.
    const encoded = new Set(batches.flat().map((r) => encodeBinaryRecord(r).toString('hex')));
    for (const m of a) expect(encoded.has(m.value!.toString('hex'))).toBe(true);
    for (let v = 0; v < 25; v++) {
      const key = hex(0x1000 + v, 40);
      const blocks = a
        .filter((m) => m.key?.toString() === key)
        .map((m) => {
          const d = decodeRecord(m.value);
          if (!d.ok) throw new Error(d.reason);
          return d.record.blockNumber;
        });
      expect(blocks).toEqual(Array.from({ length: 120 }, (_, i) => 100 + i));
    }
  });

  it('refuses to publish once its thread is gone, and says so', async () => {
    const topic = await newTopic();
    const p = await createThreadedPublisher({
      brokers: brokers(),
      clientId: 'publisher-test',
      topic,
      logger: silent,
    });
    expect(p.broken).toBe(false);
    await p.close();
    expect(p.broken).toBe(true);
    await expect(p.publish([record(0, 0)])).rejects.toThrow(/publisher thread/);
  });

  it('fails to start, with the Kafka error, when no broker answers', async () => {
    await expect(
      createThreadedPublisher({
        brokers: ['127.0.0.1:1'],
        clientId: 'publisher-test',
        topic: 'nowhere',
        logger: silent,
      }),
    ).rejects.toThrow();
  }, 120_000);
});
