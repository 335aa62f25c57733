import { z } from 'zod';
import { valuationContext } from './context.js';
import { payloadSchemas, type RecordType } from './payloads.js';
import { address, hash32 } from './primitives.js';

export const SCHEMA_VERSION = 1 as const;

const envelopeBase = {
  schemaVersion: z.literal(SCHEMA_VERSION),
  chainId: z.number().int().positive(),
  blockNumber: z.number().int().nonnegative(),
  blockHash: hash32,
  /** Unix seconds, from the block header. */
  blockTimestamp: z.number().int().nonnegative(),
  /** Transaction hash; ZERO_HASH for records the indexer synthesises (mark, revert). */
  txHash: hash32,
  txIndex: z.number().int().min(-1),
  /** Log index within the block; -1 for synthesised records. */
  logIndex: z.number().int().min(-1),
  vault: address,
  context: valuationContext,
};

function variant<T extends RecordType>(type: T) {
  return z.object({ ...envelopeBase, type: z.literal(type), payload: payloadSchemas[type] });
}

/**
 * One record of the event log (the Kafka topic), keyed by `vault`. Identity:
 * (chainId, blockHash, txHash, logIndex, vault) — `vault` is part of it because synthesised
 * records share tx/log positions across vaults. Duplicates are expected and harmless.
 */
export const vaultRecord = z.discriminatedUnion('type', [
  variant('vault.created'),
  variant('deposit'),
  variant('withdrawal'),
  variant('position.opened'),
  variant('position.resized'),
  variant('position.rebalanced'),
  variant('position.closed'),
  variant('fees.collected'),
  variant('rewards.accrued'),
  variant('rewards.claimed'),
  variant('fee.charged'),
  variant('suspended'),
  variant('resumed'),
  variant('exit.requested'),
  variant('exit.completed'),
  variant('strategy.selected'),
  variant('mark'),
  variant('revert'),
]);

export type VaultRecord = z.output<typeof vaultRecord>;
export type VaultRecordOf<T extends RecordType> = Extract<VaultRecord, { type: T }>;

/** Stable identity string of a record; the ledger is unique on it. */
export function recordId(
  r: Pick<VaultRecord, 'chainId' | 'blockHash' | 'txHash' | 'logIndex' | 'vault'>,
): string {
  return `${r.chainId}:${r.blockHash}:${r.txHash}:${r.logIndex}:${r.vault}`;
}

/** Serialises a record for the log (UTF-8 JSON). */
export function encodeRecord(r: VaultRecord): Buffer {
  return Buffer.from(JSON.stringify(r));
}

export type DecodeResult = { ok: true; record: VaultRecord } | { ok: false; reason: string };

/** Parses bytes from the log; never throws — a bad record is a value the caller dead-letters. */
export function decodeRecord(bytes: Buffer | Uint8Array | null): DecodeResult {
  if (!bytes || bytes.length === 0) return { ok: false, reason: 'empty record value' };
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (e) {
    return { ok: false, reason: `not JSON: ${(e as Error).message}` };
  }
  const parsed = vaultRecord.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, reason: `schema: ${issue?.path.join('.') || '(root)'}: ${issue?.message}` };
  }
  return { ok: true, record: parsed.data };
}
