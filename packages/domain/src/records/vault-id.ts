/**
 * A vault's identity in a deployment that follows several chains: the chain and the address
 * together (DESIGN §8). The same deployer (or CREATE2) gives the same address on every chain, so
 * the address alone is never an identity. Written as a CAIP-10 account id,
 * `eip155:{chainId}:{address}` (address lowercase): the key of every in-memory map of vaults, the
 * id streams and callbacks name, and what the API takes and serves as `id`.
 */
export type VaultId = `eip155:${number}:0x${string}`;

/** A vault's chain and address, apart. */
export interface VaultRef {
  chainId: number;
  /** Lowercase 0x address. */
  vault: string;
}

const CAIP10 = /^eip155:([1-9][0-9]{0,15}):(0x[0-9a-fA-F]{40})$/;

/** The id of the vault at `address` on `chainId` (the address is lowercased). */
export const vaultId = (chainId: number, address: string): VaultId =>
  `eip155:${chainId}:${address.toLowerCase()}` as VaultId;

/** A record's (or row's) vault id. */
export const vaultIdOf = (r: { chainId: number; vault: string }): VaultId => vaultId(r.chainId, r.vault);

/**
 * The chain and address of a CAIP-10 id (`eip155:{chainId}:0x…`, any case of the address; the
 * chain a positive safe integer); null for anything else.
 */
export function parseVaultId(id: string): VaultRef | null {
  const m = CAIP10.exec(id);
  if (!m) return null;
  const chainId = Number(m[1]);
  if (!Number.isSafeInteger(chainId)) return null;
  return { chainId, vault: (m[2] as string).toLowerCase() };
}

/** parseVaultId for ids this service made: throws on anything else (a bug, never input). */
export function refOf(id: string): VaultRef {
  const ref = parseVaultId(id);
  if (!ref) throw new Error(`not a vault id: ${JSON.stringify(id)}`);
  return ref;
}

/**
 * Splits vault ids into parallel arrays, for SQL that matches `(chain_id, vault)` pairs:
 * `… join unnest($1::int[], $2::text[]) as k(chain_id, vault) using (chain_id, vault)`.
 */
export function splitVaultIds(ids: Iterable<string>): { chainIds: number[]; vaults: string[] } {
  const chainIds: number[] = [];
  const vaults: string[] = [];
  for (const id of ids) {
    const { chainId, vault } = refOf(id);
    chainIds.push(chainId);
    vaults.push(vault);
  }
  return { chainIds, vaults };
}
