import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseVaultId, refOf, splitVaultIds, vaultId, vaultIdOf } from './vault-id.js';

const addr = fc
  .uint8Array({ minLength: 20, maxLength: 20 })
  .map((b) => `0x${Buffer.from(b).toString('hex')}`);
const chain = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });

describe('vault id (CAIP-10)', () => {
  it('round-trips every chain and address; the address comes back lowercase', () => {
    fc.assert(
      fc.property(chain, addr, fc.boolean(), (c, a, upper) => {
        const id = vaultId(c, upper ? a.toUpperCase().replace('0X', '0x') : a);
        expect(id).toBe(`eip155:${c}:${a}`);
        expect(parseVaultId(id)).toEqual({ chainId: c, vault: a });
        expect(vaultIdOf({ chainId: c, vault: a })).toBe(id);
      }),
    );
  });

  it('refuses what is not an eip155 account id', () => {
    const a = `0x${'ab'.repeat(20)}`;
    for (const bad of [
      a,
      `eip155:0:${a}`,
      `eip155:01:${a}`,
      `eip155:-1:${a}`,
      `eip155:1:${a}00`,
      `eip155:1:${a.slice(0, -1)}`,
      `cosmos:1:${a}`,
      `eip155:99999999999999999:${a}`,
      `eip155:1:${a} `,
      '',
    ])
      expect(parseVaultId(bad), bad).toBeNull();
    expect(() => refOf(a)).toThrow(/not a vault id/);
  });

  it('splits ids into parallel chain and address arrays, in order', () => {
    const a = `0x${'01'.repeat(20)}`;
    expect(splitVaultIds([vaultId(31338, a), vaultId(31337, a)])).toEqual({
      chainIds: [31338, 31337],
      vaults: [a, a],
    });
  });
});
