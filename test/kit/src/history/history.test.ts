import { createVaultState, evolve, type VaultRecord, type VaultState } from '@vault-yield/domain';
import { describe, expect, it } from 'vitest';
import { createHistoryGenerator } from './index.js';

describe('history generator: a busy vault’s block (recordsPerVaultBlock)', () => {
  const taken = createHistoryGenerator({ vaults: 20, seed: 5, recordsPerVaultBlock: 4 }).take(4_000);
  // take() may stop inside a group: keep whole blocks only.
  let end = taken.length;
  while (end > 0 && !taken[end - 1]?.lastInBlock) end--;
  const records = taken.slice(0, end);

  it('puts a vault’s group in one block, valued at its end, only the last lastInBlock', () => {
    const groups = new Map<string, VaultRecord[]>();
    for (const r of records) {
      const key = `${r.vault}@${r.blockNumber}`;
      groups.set(key, [...(groups.get(key) ?? []), r]);
    }
    let grouped = 0;
    for (const g of groups.values()) {
      expect(g.filter((r) => r.lastInBlock)).toEqual([g.at(-1)]);
      for (const r of g) expect(JSON.stringify(r.context)).toBe(JSON.stringify(g.at(-1)?.context));
      if (g.length > 1) grouped++;
      // A mark is a vault's only record of its block.
      if (g.some((r) => r.type === 'mark')) expect(g).toHaveLength(1);
    }
    expect(grouped).toBeGreaterThan(100);
  });

  it('folds with no refusal and no reconciliation: the events explain the block-end holdings', () => {
    const states = new Map<string, VaultState>();
    for (const r of records) {
      const before = states.get(r.vault);
      const after = before ? evolve(before, r) : createVaultState(r);
      expect(after.reconciled).toEqual([]);
      states.set(r.vault, after);
    }
    expect(states.size).toBe(20);
  });

  it('leaves the default history as it was: one record a vault per block, each its last', () => {
    const plain = createHistoryGenerator({ vaults: 20, seed: 5 }).take(2_000);
    const seen = new Set<string>();
    for (const r of plain) {
      expect(r.lastInBlock).toBe(true);
      const key = `${r.vault}@${r.blockNumber}`;
      expect(seen.has(key)).toBe(false);
      seen.add(key);
    }
  });
});
