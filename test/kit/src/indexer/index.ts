import { spawn } from 'node:child_process';
import { join } from 'node:path';
import {
  type ChainRecord,
  createBlockValuator,
  createChainClient,
  createValuationReader,
  decodeLog,
  eventTopics,
  type RawLog,
} from '@vault-yield/chain';
import { createLogger } from '@vault-yield/common';
import { createRpc } from '@vault-yield/devstack/chain';
import { decodeRecord, recordId, SCHEMA_VERSION, type VaultRecord } from '@vault-yield/domain';
import { createBatchConsumer, createLogAdmin, type LogMessage, type LogSecurity } from '@vault-yield/log';

export const silent = createLogger({ name: 'indexer-test', level: process.env.TEST_LOG_LEVEL ?? 'silent' });

/** The repository root (this file is test/kit/src/indexer/index.ts). */
const root = join(import.meta.dirname, '..', '..', '..', '..');

/**
 * Runs the indexer process (services/indexer/src/main.ts) to its exit, as an operator does, with
 * `env` over this process's environment (SIGKILLed after `timeoutMs`): its exit code and stderr.
 */
export function runIndexerMain(
  env: Record<string, string>,
  timeoutMs = 90_000,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'services/indexer/src/main.ts'], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

export interface TopicRecord {
  partition: number;
  offset: string;
  record: VaultRecord;
}

/** Every message of the topic as stored (each partition in offset order), read with the log package's consumer. */
export async function readMessages(
  brokers: string[],
  topic: string,
  /** SASL/TLS of the brokers (none: plaintext): no client of a process inherits another's. */
  security: LogSecurity = {},
): Promise<LogMessage<null>[]> {
  const admin = await createLogAdmin({ brokers, clientId: 'test-admin', ...security });
  let total = 0;
  try {
    for (const o of await admin.offsets(topic)) total += Number(BigInt(o.high) - BigInt(o.low));
  } finally {
    await admin.close();
  }
  if (total === 0) return [];
  const out: LogMessage<null>[] = [];
  let resolveAll!: () => void;
  const all = new Promise<void>((r) => (resolveAll = r));
  const consumer = createBatchConsumer<null>({
    brokers,
    ...security,
    clientId: 'test-reader',
    groupId: `test-reader-${Date.now()}-${Math.random().toString(36).slice(2)}`,
    topic,
    decode: () => null,
    storedOffsets: async () => new Map(),
    handleBatch: async (batch) => {
      out.push(...batch.messages);
      if (out.length >= total) resolveAll();
      return { applied: true };
    },
  });
  await consumer.start();
  try {
    await all;
  } finally {
    await consumer.stop();
  }
  return out.sort((a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)));
}

/** Every record of the topic (each partition in offset order); an undecodable one throws. */
export async function readTopic(
  brokers: string[],
  topic: string,
  security: LogSecurity = {},
): Promise<TopicRecord[]> {
  return (await readMessages(brokers, topic, security)).map((m) => {
    const d = decodeRecord(m.value);
    if (!d.ok) throw new Error(`undecodable record at ${m.partition}/${m.offset}: ${d.reason}`);
    return { partition: m.partition, offset: m.offset, record: d.record };
  });
}

interface RpcLogJson {
  address: string;
  topics: `0x${string}`[];
  data: `0x${string}`;
  blockNumber: string;
  blockHash: `0x${string}`;
  blockTimestamp?: string;
  transactionHash: `0x${string}`;
  transactionIndex: string;
  logIndex: string;
  removed: boolean;
}

/**
 * The vault records a chain holds, found without the indexer: every log of the range (no filter),
 * vaults from the factory's VaultCreated logs, each vault log decoded, each context read with
 * eth_call at the record's block (ValuationReader).
 */
export async function expectedRecords(
  rpcUrl: string,
  chainId: number,
  factory: string,
  fromBlock: number,
  toBlock: number,
): Promise<VaultRecord[]> {
  const rpc = createRpc(rpcUrl);
  const logs = await rpc.call<RpcLogJson[]>('eth_getLogs', [
    { fromBlock: `0x${fromBlock.toString(16)}`, toBlock: `0x${toBlock.toString(16)}` },
  ]);
  const client = createChainClient({ rpcUrl, cacheTime: 0 });
  const reader = createValuationReader(client, { factory: factory as `0x${string}` });
  const valuator = createBlockValuator(client, {
    factory: factory as `0x${string}`,
    heartbeatOf: () => 3600,
  });
  const vaults = new Set<string>();
  const chainRecords: (ChainRecord & { ts: number })[] = [];
  for (const l of logs) {
    const addr = l.address.toLowerCase();
    const isFactoryCreation = addr === factory.toLowerCase() && l.topics[0] === eventTopics.vaultCreated;
    if (!isFactoryCreation && !vaults.has(addr)) continue;
    const raw: RawLog = {
      address: addr as `0x${string}`,
      topics: l.topics as [`0x${string}`, ...`0x${string}`[]],
      data: l.data,
      blockNumber: BigInt(l.blockNumber),
      blockHash: l.blockHash,
      transactionHash: l.transactionHash,
      transactionIndex: Number(l.transactionIndex),
      logIndex: Number(l.logIndex),
      removed: false,
    };
    const r = decodeLog(raw);
    if (!r.ok || r.kind !== 'record') throw new Error(`expected a vault record: ${JSON.stringify(r)}`);
    if (r.record.type === 'vault.created') vaults.add(r.record.vault);
    chainRecords.push({ ...r.record, ts: Number(BigInt(l.blockTimestamp ?? '0')) });
  }
  const out: VaultRecord[] = [];
  for (const [i, { ts, ...cr }] of chainRecords.entries()) {
    const last = !chainRecords
      .slice(i + 1)
      .some((o) => o.vault === cr.vault && o.blockNumber === cr.blockNumber);
    out.push({
      ...cr,
      schemaVersion: SCHEMA_VERSION,
      chainId,
      blockTimestamp: ts,
      lastInBlock: last,
      context: (await valuator.read(cr.blockNumber, [await reader.vaultInfo(cr.vault)])).get(cr.vault)!,
    } as VaultRecord);
  }
  return out;
}

/** The context the indexer reads for a vault at a block (for marks). */
export function contextReader(rpcUrl: string, factory: string) {
  const client = createChainClient({ rpcUrl, cacheTime: 0 });
  const reader = createValuationReader(client, { factory: factory as `0x${string}` });
  const valuator = createBlockValuator(client, {
    factory: factory as `0x${string}`,
    heartbeatOf: () => 3600,
  });
  return async (vault: string, block: number) => {
    const v = vault.toLowerCase() as `0x${string}`;
    return (await valuator.read(block, [await reader.vaultInfo(v)])).get(v)!;
  };
}

/** Records grouped by vault, in the order they appear on the topic. */
export function byVault(records: readonly VaultRecord[]): Map<string, VaultRecord[]> {
  const m = new Map<string, VaultRecord[]>();
  for (const r of records) {
    const list = m.get(r.vault) ?? [];
    list.push(r);
    m.set(r.vault, list);
  }
  return m;
}

/** Identity plus content: two records with the same key must be the same bytes of meaning. */
/** A record's canonical JSON, without its `seq` (the expected records do not know where marks fall). */
export function normalized(r: unknown): string {
  if (r && typeof r === 'object' && 'seq' in r) {
    const { seq: _seq, ...rest } = r as Record<string, unknown>;
    r = rest;
  }
  const canon = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canon);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, canon((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return JSON.stringify(canon(r));
}

export { recordId };
