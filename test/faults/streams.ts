import type { VaultRecord } from '@vault-yield/domain';
import { blockHash, createHistoryGenerator, type VaultModel } from '@vault-yield/test-kit/history';

/**
 * A vault history of about `records` records with `reorgs` reorgs in it: each time, one vault gets
 * records in two orphaned blocks (a deposit and a mark), then a revert record naming them, then the
 * canonical records of those heights (and, later, the revert again: republished duplicates).
 */
export function historyWithReverts(o: { records: number; vaults: number; reorgs: number; seed: number }): {
  records: VaultRecord[];
  reverts: number;
} {
  const gen = createHistoryGenerator({ vaults: o.vaults, seed: o.seed });
  const out: VaultRecord[] = [];
  const again: VaultRecord[] = [];
  const per = Math.floor(o.records / (o.reorgs + 1));
  for (let r = 0; r < o.reorgs; r++) {
    out.push(...gen.take(per));
    const m = gen.vaults()[(r * 7) % gen.vaults().length] as VaultModel;
    const b = Math.max(gen.block(), m.lastBlock) + 3;
    const fork = r + 1;
    const orphanHashes = [blockHash(b + 1, fork), blockHash(b + 2, fork)] as `0x${string}`[];
    out.push(
      gen.record(
        m,
        'deposit',
        { from: m.owner, token: m.token1, amount: '5000000' },
        { block: b + 1, blockHash: orphanHashes[0] as `0x${string}` },
      ),
      gen.record(m, 'mark', {}, { block: b + 2, blockHash: orphanHashes[1] as `0x${string}` }),
    );
    // Other vaults' records between the orphaned blocks and the revert (other partitions, too).
    out.push(...gen.take(Math.min(200, per)));
    const revert = gen.record(
      m,
      'revert',
      { fromBlock: b + 1, orphanedBlockHashes: orphanHashes as [`0x${string}`] },
      { block: b + 2, blockHash: blockHash(b + 2) },
    );
    out.push(
      revert,
      gen.record(m, 'mark', {}, { block: b + 1, blockHash: blockHash(b + 1) }),
      gen.record(m, 'mark', {}, { block: b + 2, blockHash: blockHash(b + 2) }),
    );
    again.push(revert);
  }
  out.push(...gen.take(o.records - per * o.reorgs), ...again);
  return { records: out, reverts: o.reorgs };
}
