import type { Logger } from '@vault-yield/common';
import {
  decodeRecord,
  equityBasis,
  recordId,
  type VaultRecord,
  vaultId,
  vaultIdOf,
} from '@vault-yield/domain';
import type { ProjectionStore, RecordKey } from '@vault-yield/store';
import { NO_HEAD, refoldVault, type VaultWork, writeVaults } from './fold.js';
import { bodyOf, ledgerRow, offLedger } from './rows.js';
import { retriedFollow } from './runner/index.js';

export interface RetryOutcome {
  /**
   * The vault's id (`eip155:{chainId}:{address}`) when its letters decoded; else the address the
   * letters name (their message key), or null.
   */
  vault: string | null;
  /** Dead-letter ids of this vault that the retry took. */
  ids: number[];
  /** Re-applied (deleted from dead letters), or left in place with the reason. */
  ok: boolean;
  reason?: string;
}

class StillRefused extends Error {}

/**
 * Re-applies dead letters after a fix is deployed: for each vault, in one transaction, decodes its
 * letters with the current code, adds them to the vault's ledger (`on conflict do nothing`: a
 * record already there is not applied twice), re-folds the vault from its whole ledger in the
 * vault's order (block, tx, log) with the current fold, rewrites its rows and deletes the letters.
 * The letters are locked (`for update`) and the partitions' epochs bumped under their offsets-row
 * locks, so a running projector drops its cached states of the partition and never folds onto a
 * stale one. A letter that still does not decode, or that the fold still refuses, rolls its vault
 * back whole and stays (reported). The result is the vault a clean run would have built.
 */
export async function retryDeadLetters(
  store: ProjectionStore,
  log: Logger,
  opts: { id?: number } = {},
): Promise<RetryOutcome[]> {
  const all = await store.transaction((tx) => tx.lockDeadLetters(opts.id));
  // By vault id: the same address on two chains is two vaults, retried apart.
  const groups = new Map<string, typeof all>();
  for (const l of all) {
    const decoded = decodeRecord(l.value);
    const vault = decoded.ok
      ? vaultIdOf(decoded.record)
      : l.vault && l.chainId != null
        ? vaultId(l.chainId, l.vault)
        : l.vault;
    const key = vault ?? `?${l.id}`;
    groups.set(key, [...(groups.get(key) ?? []), l]);
  }
  const outcomes: RetryOutcome[] = [];
  for (const [key, letters] of groups) {
    const vault = key.startsWith('?') ? null : key;
    const ids = letters.map((l) => l.id);
    try {
      await store.transaction(async (tx) => {
        const locked = await tx.lockDeadLetters(letters.length === 1 ? letters[0]!.id : undefined);
        const mine = locked.filter((l) => ids.includes(l.id));
        if (mine.length !== ids.length)
          throw new StillRefused('dead letters changed under the retry; run it again');
        const records: { record: VaultRecord; value: Buffer | null }[] = [];
        for (const l of mine) {
          const d = decodeRecord(l.value);
          if (!d.ok)
            throw new StillRefused(`offset ${l.partition}:${l.offset} still does not decode: ${d.reason}`);
          if (d.record.type === 'revert')
            throw new StillRefused(`offset ${l.partition}:${l.offset} is a revert: rebuild`);
          records.push({ record: d.record, value: l.value });
        }
        for (const p of new Set(mine.map((l) => `${l.topic}\u0000${l.partition}`))) {
          const [topic, partition] = p.split('\u0000') as [string, string];
          await tx.bumpEpochs(topic, Number(partition));
        }
        const target = vaultIdOf(records[0]!.record);
        const stored = (await tx.loadVaults([target])).get(target);
        const follows = retriedFollow(
          target,
          { lastSeq: stored?.lastSeq ?? null, hasState: stored !== undefined },
          records.map((r) => r.record),
        );
        if (!follows.ok) throw new StillRefused(follows.reason);
        const lastSeq = follows.lastSeq;
        await tx.insertLedger(records.filter((r) => !offLedger(r.record)).map((r) => ledgerRow(r.record)));
        await tx.copyBundles(new Map([[target, records.map((r) => bodyOf(r.record, r.value))]]));
        const w: VaultWork = {
          id: target,
          state: null,
          lastRecordId: '',
          head: NO_HEAD,
          storedHead: NO_HEAD,
          seen: new Set(),
          changed: false,
          micros: null,
          lastSeq,
          held: false,
        };
        // The retried rows' amounts are read with the fold's state after each (as live rows are).
        const retried = new Set(records.map((r) => recordId(r.record)));
        const amounts: (RecordKey & { amounts: string })[] = [];
        await refoldVault(
          tx,
          w,
          (reason) => {
            throw new StillRefused(`the fold still refuses a record of ${target}: ${reason}`);
          },
          log,
          undefined,
          (r, s) => {
            if (retried.has(recordId(r)) && !offLedger(r)) {
              const row = ledgerRow(r, s);
              if (row.amounts !== undefined) amounts.push({ ...row, amounts: row.amounts });
            }
          },
        );
        await tx.setLedgerAmounts(amounts);
        if (w.state) w.micros = equityBasis(w.state);
        await tx.deleteDeadLetters(ids);
        // Held letters not taken by this retry (--id) keep the vault held.
        w.held = (await tx.lockHeld([target])).length > 0;
        await writeVaults(tx, [w], mine[0]!.partition);
        await tx.markBehind([target]);
        await tx.noteCommit([target]);
      });
      log.info({ vault, ids }, 'dead letters re-applied');
      outcomes.push({ vault, ids, ok: true });
    } catch (err) {
      if (!(err instanceof StillRefused)) throw err;
      log.error({ vault, ids, reason: err.message }, 'dead letters left in place');
      outcomes.push({ vault, ids, ok: false, reason: err.message });
    }
  }
  return outcomes;
}
