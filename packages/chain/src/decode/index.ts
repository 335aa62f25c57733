import { fastParsePayload, payloadSchemas } from '@vault-yield/domain';
import {
  type AbiEvent,
  type AbiParameter,
  type Address,
  decodeAbiParameters,
  type Hex,
  toEventSelector,
} from 'viem';
import {
  answerUpdatedEventAbi,
  eventTopics,
  factoryEventsAbi,
  mintEventAbi,
  swapEventAbi,
  transferEventAbi,
  vaultCreatedEventAbi,
  vaultEventsAbi,
} from '../events/index.js';
import { bytes32ToAscii } from './bytes32.js';
import { staticDecoder } from './static.js';
import type {
  ChainRecord,
  ChainRecordType,
  DecodeFailure,
  DecodeLogResult,
  DecodeVaultLogResult,
  LogPosition,
  LogRef,
  RawLog,
  WatchedEvent,
} from './types.js';

export { asciiToBytes32, bytes32ToAscii } from './bytes32.js';
export type * from './types.js';

/** Every event that makes a vault record: VaultCreated and each event of the Vault ABI. */
type RecordEventName = (typeof vaultCreatedEventAbi)['name'] | (typeof vaultEventsAbi)[number]['name'];

/**
 * Solidity event name → record type (the table in packages/domain payloads.ts). Exhaustive over
 * the ABI: a vault event added to the contract fails to compile here until it has a record type.
 */
const recordTypeOfEvent = {
  VaultCreated: 'vault.created',
  Deposited: 'deposit',
  Withdrawn: 'withdrawal',
  PositionOpened: 'position.opened',
  PositionResized: 'position.resized',
  PositionRebalanced: 'position.rebalanced',
  PositionClosed: 'position.closed',
  FeesCollected: 'fees.collected',
  RewardsAccrued: 'rewards.accrued',
  RewardsClaimed: 'rewards.claimed',
  PerformanceFeeCharged: 'fee.charged',
  Suspended: 'suspended',
  Resumed: 'resumed',
  ExitRequested: 'exit.requested',
  ExitCompleted: 'exit.completed',
  StrategySelected: 'strategy.selected',
  PerformanceFeeSet: 'fee.rate.set',
  Swapped: 'swap',
} as const satisfies Record<RecordEventName, ChainRecordType>;

/** What converterOf answers for a bytes32 that is no right-padded ASCII string. */
const NOT_ASCII = Symbol('not ASCII');

/** ABI value → JSON value of the record vocabulary (NOT_ASCII for a bytes32 without one). */
function converterOf(type: string): (value: unknown) => unknown {
  if (type === 'address') return (v) => lower(v as string);
  if (type === 'bytes32') return (v) => bytes32ToAscii(v as Hex) ?? NOT_ASCII;
  return (v) => (typeof v === 'bigint' ? v.toString() : v);
}

const allEventsAbi: readonly AbiEvent[] = [
  ...factoryEventsAbi,
  ...vaultEventsAbi,
  swapEventAbi,
  mintEventAbi,
  answerUpdatedEventAbi,
  transferEventAbi,
];
const recordTopics = new Set<Hex>([eventTopics.vaultCreated, ...eventTopics.vault]);

/**
 * topic0 → the event and its inputs split by `indexed`, computed once: decoding is on the
 * indexer's hot path, and viem's decodeEventLog hashes every candidate's signature per call.
 * `fast` reads all-static events straight from the hex (viem's generic decoder is several times
 * slower); `record` is the record type of a vault-record event.
 */
const eventsByTopic = new Map(
  allEventsAbi.map((event) => [
    toEventSelector(event),
    {
      event,
      indexed: event.inputs.filter((i) => i.indexed),
      data: event.inputs.filter((i) => !i.indexed),
      fast: staticDecoder(event.inputs),
      record: recordTypeOfEvent[event.name as keyof typeof recordTypeOfEvent] as ChainRecordType | undefined,
      fields: event.inputs.map((i) => ({ name: i.name ?? '', convert: converterOf(i.type) })),
    },
  ]),
);

/** Decodes topics and data against one known event, as strictly as viem's decodeEventLog. */
function decodeKnownEvent(
  topic0: Hex,
  topics: readonly Hex[],
  data: Hex,
  fast: boolean,
): { eventName: string; args: Record<string, unknown> } {
  const entry = eventsByTopic.get(topic0);
  if (!entry) throw new Error(`unknown event topic ${topic0}`);
  if (fast && entry.fast) {
    const args = entry.fast(topics, data);
    if (args) return { eventName: entry.event.name, args };
  }
  if (topics.length !== entry.indexed.length + 1) {
    throw new Error(`expected ${entry.indexed.length} indexed topics, got ${topics.length - 1}`);
  }
  const args: Record<string, unknown> = {};
  entry.indexed.forEach((input: AbiParameter, i) => {
    // Every indexed input of these events is a static type, carried whole in its topic.
    args[input.name ?? ''] = decodeAbiParameters([input], topics[i + 1]!)[0];
  });
  if (entry.data.length > 0) {
    const values = decodeAbiParameters(entry.data, data);
    entry.data.forEach((input, i) => {
      args[input.name ?? ''] = values[i];
    });
  } else if (data !== '0x') {
    throw new Error('unexpected data for an event without data fields');
  }
  return { eventName: entry.event.name, args };
}
const knownTopics = new Set<Hex>([
  ...eventTopics.factory,
  ...eventTopics.vault,
  eventTopics.swap,
  eventTopics.mint,
  eventTopics.answerUpdated,
  eventTopics.transfer,
]);

/** Where a log stands, for error reports and bad-log records. */
export function refOf(log: RawLog): LogRef {
  return {
    address: log.address,
    topic0: log.topics[0] ?? null,
    blockNumber: log.blockNumber === null ? null : Number(log.blockNumber),
    blockHash: log.blockHash,
    txHash: log.transactionHash,
    logIndex: log.logIndex,
  };
}

function fail(log: RawLog, reason: string): DecodeFailure {
  return { ok: false, reason, log: refOf(log) };
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

function lower(a: string): Address {
  return a.toLowerCase() as Address;
}

/**
 * Decodes any log of the reference contracts. Never throws: an unknown topic, a topics/data
 * shape that does not match the ABI, a pending or removed log, or a payload that fails its
 * schema all come back as `{ ok: false, reason, log }` for the caller to dead-letter.
 */
export function decodeLog(log: RawLog): DecodeLogResult {
  try {
    return decodeUnsafe(log, true);
  } catch (e) {
    return fail(log, `unexpected decode error: ${(e as Error).message}`);
  }
}

/**
 * decodeLog with viem's generic ABI decoder for every event (no static fast path): the reference
 * the fast path is tested against. Not exported from the package.
 */
export function decodeLogReference(log: RawLog): DecodeLogResult {
  try {
    return decodeUnsafe(log, false);
  } catch (e) {
    return fail(log, `unexpected decode error: ${(e as Error).message}`);
  }
}

/** Like decodeLog, for callers that expect vault records only (other known events fail too). */
export function decodeVaultLog(log: RawLog): DecodeVaultLogResult {
  const r = decodeLog(log);
  if (!r.ok) return r;
  if (r.kind === 'watched') return fail(log, `not a vault record event: ${r.event.kind}`);
  return { ok: true, record: r.record };
}

function decodeUnsafe(log: RawLog, fast: boolean): DecodeLogResult {
  const topic0 = log.topics[0];
  if (!topic0) return fail(log, 'log has no topics (anonymous event)');
  if (!knownTopics.has(topic0)) return fail(log, `unknown event topic0 ${topic0}`);
  if (log.removed) return fail(log, 'log was removed by a reorg (removed: true)');
  if (
    log.blockNumber === null ||
    log.blockHash === null ||
    log.transactionHash === null ||
    log.transactionIndex === null ||
    log.logIndex === null
  ) {
    return fail(log, 'pending log (no block position)');
  }
  const pos: LogPosition = {
    blockNumber: Number(log.blockNumber),
    blockHash: lower(log.blockHash) as LogPosition['blockHash'],
    txHash: lower(log.transactionHash) as LogPosition['txHash'],
    txIndex: log.transactionIndex,
    logIndex: log.logIndex,
  };

  let decoded: { eventName: string; args: Record<string, unknown> };
  try {
    decoded = decodeKnownEvent(topic0, log.topics as Hex[], log.data, fast);
  } catch (e) {
    const msg = (e as Error & { shortMessage?: string }).shortMessage ?? (e as Error).message;
    return fail(log, `ABI decode failed: ${msg.split('\n')[0]}`);
  }
  const { eventName, args } = decoded;

  if (!recordTopics.has(topic0))
    return { ok: true, kind: 'watched', event: watchedEvent(log, pos, eventName, args) };

  const entry = eventsByTopic.get(topic0)!;
  const raw: Record<string, unknown> = {};
  for (const { name, convert } of entry.fields) {
    const value = convert(args[name]);
    if (value === NOT_ASCII)
      return fail(
        log,
        `${eventName}.${name}: bytes32 ${args[name] as string} is not a right-padded ASCII string`,
      );
    raw[name] = value;
  }
  const type = entry.record!;
  const payload = parsePayload(type, raw, fast);
  if (typeof payload === 'string') return fail(log, payload);
  // VaultCreated is emitted by the factory: the record belongs to the new vault.
  const vault = eventName === vaultCreatedEventAbi.name ? (raw.vault as Address) : lower(log.address);
  // The position written out, not `{ ...pos, more }`: once optimised, V8 (Node 20) gives every
  // object such a spread makes a hidden class of its own (≈ 1.5 µs per added key, more than the
  // rest of the decode, and every later read of the record goes megamorphic). Same key order.
  const { blockNumber, blockHash, txHash, txIndex, logIndex } = pos;
  const record = { blockNumber, blockHash, txHash, txIndex, logIndex, vault, type, payload } as ChainRecord;
  return { ok: true, kind: 'record', record };
}

/**
 * The payload as its schema outputs it, or why the schema refuses it (zod's words, also when the
 * hand-written check of the fast path refused it). The reference path asks zod only.
 */
function parsePayload(type: ChainRecordType, raw: Record<string, unknown>, fast: boolean): object | string {
  const quick = fast ? fastParsePayload(type, raw) : undefined;
  if (quick !== undefined) return quick;
  const parsed = payloadSchemas[type].safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  return `${type} payload: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`;
}

function watchedEvent(
  log: RawLog,
  pos: LogPosition,
  eventName: string,
  args: Record<string, unknown>,
): WatchedEvent {
  // A format check, not viem's getAddress: its checksum (a keccak per log) was thrown away here.
  if (!ADDRESS.test(log.address)) throw new Error(`log address ${String(log.address)} is not an address`);
  const address = lower(log.address);
  // The position written out, not spread (see decodeUnsafe); same key order.
  const { blockNumber, blockHash, txHash, txIndex, logIndex } = pos;
  switch (eventName) {
    case 'Swap':
      return {
        blockNumber,
        blockHash,
        txHash,
        txIndex,
        logIndex,
        kind: 'swap',
        pool: address,
        sqrtPriceX96: String(args.sqrtPriceX96),
        tick: Number(args.tick),
        liquidity: String(args.liquidity),
      };
    case 'Mint':
      return {
        blockNumber,
        blockHash,
        txHash,
        txIndex,
        logIndex,
        kind: 'mint',
        pool: address,
        sender: lower(args.sender as string),
        owner: lower(args.owner as string),
        tickLower: Number(args.tickLower),
        tickUpper: Number(args.tickUpper),
        liquidity: String(args.amount),
        amount0: String(args.amount0),
        amount1: String(args.amount1),
      };
    case 'AnswerUpdated':
      return {
        blockNumber,
        blockHash,
        txHash,
        txIndex,
        logIndex,
        kind: 'answer',
        feed: address,
        answer: String(args.current),
        roundId: String(args.roundId),
        updatedAt: Number(args.updatedAt),
      };
    case 'Transfer':
      return {
        blockNumber,
        blockHash,
        txHash,
        txIndex,
        logIndex,
        kind: 'transfer',
        token: address,
        from: lower(args.from as string),
        to: lower(args.to as string),
        value: String(args.value),
      };
    case 'FeedSet':
      return {
        blockNumber,
        blockHash,
        txHash,
        txIndex,
        logIndex,
        kind: 'feedSet',
        factory: address,
        token: lower(args.token as string),
        feed: lower(args.feed as string),
      };
    default:
      return {
        blockNumber,
        blockHash,
        txHash,
        txIndex,
        logIndex,
        kind: 'rolesSet',
        factory: address,
        guardian: lower(args.guardian as string),
        feeCollector: lower(args.feeCollector as string),
      };
  }
}
