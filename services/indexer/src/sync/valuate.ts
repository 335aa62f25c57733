import type { ValuedVault } from '@vault-yield/chain';
import type { ValuationContext, VaultRecord } from '@vault-yield/domain';

type Address = `0x${string}`;

export interface Valuation {
  /** Contexts by vault at a block, named by its hash too (BlockValuator.read, with the caller's retries). */
  read(
    block: number,
    vaults: readonly ValuedVault[],
    blockHash: `0x${string}`,
    /** The block's time (Unix seconds): a feed newer than it marks an answer of a later state. */
    blockTimestamp: number,
  ): Promise<Map<Address, ValuationContext>>;
  /** The valued set of a vault the records name. */
  vault(vault: Address): ValuedVault;
  /** Blocks read at once. */
  concurrency: number;
}

/**
 * Gives every record the chain's state at its block: one valuation read per block for all the
 * vaults it has records of (blocks in parallel, `concurrency` at a time). A vault's records in
 * one block share one context object; the last of them is `lastInBlock`.
 */
/** Returns how many blocks were read. */
export async function valuateRecords(records: readonly VaultRecord[], v: Valuation): Promise<number> {
  const byBlock = new Map<number, Map<Address, VaultRecord[]>>();
  for (const r of records) {
    const vaults = byBlock.get(r.blockNumber) ?? new Map<Address, VaultRecord[]>();
    byBlock.set(r.blockNumber, vaults);
    const list = vaults.get(r.vault) ?? [];
    vaults.set(r.vault, list);
    list.push(r);
  }
  const blocks = [...byBlock.entries()];
  let next = 0;
  const worker = async () => {
    while (next < blocks.length) {
      const [block, vaults] = blocks[next++]!;
      const first = vaults.values().next().value![0]!;
      const contexts = await v.read(
        block,
        [...vaults.keys()].map(v.vault),
        first.blockHash,
        first.blockTimestamp,
      );
      for (const [vault, list] of vaults) {
        const context = contexts.get(vault);
        if (!context) throw new Error(`invariant: no valuation of vault ${vault} at block ${block}`);
        list.forEach((r, i) => {
          r.context = context;
          r.lastInBlock = i === list.length - 1;
        });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(v.concurrency, blocks.length) }, worker));
  return blocks.length;
}
