import { vaultLensAbi, vaultLensBytecode } from '@vault-yield/contracts';
import fc from 'fast-check';
import { type Address, encodeDeployData, encodeFunctionData, getAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { type LensArgs, lensDeployData, lensReadData } from './calldata.js';

/**
 * The hand-written lens call data must be byte for byte viem's, for the override (`read`) and the
 * creation-code (constructor) calls alike, and refuse what viem refuses.
 */

const hex40 = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 40, maxLength: 40 });
/** Addresses as they come: lowercase and checksummed. */
const goodAddress: fc.Arbitrary<string> = fc.oneof(
  hex40.map((h) => `0x${h}`),
  hex40.map((h) => getAddress(`0x${h}`)),
);
/** Misspelt ones: viem refuses them (a wrong checksum, all uppercase, bad prefix, length or digit). */
const badAddress: fc.Arbitrary<string> = fc.oneof(
  hex40.map((h) => `0x${h.toUpperCase()}`),
  hex40.map((h) => `0X${h}`),
  hex40.map((h) => `0x${h.slice(1)}`),
  hex40.map((h) => `0x${h}0`),
  hex40.map((h) => `0x${h.slice(1)}g`),
  hex40.map((h) => getAddress(`0x${h}`).replace(/[a-f]/, (c) => c.toUpperCase())),
);

/** Arguments whose lists repeat addresses (the vaults' tokens do), now and then with a bad value. */
const lensArgs = (bad: boolean): fc.Arbitrary<LensArgs> => {
  const address = bad
    ? fc.oneof({ weight: 30, arbitrary: goodAddress }, { weight: 1, arbitrary: badAddress })
    : goodAddress;
  return fc
    .record({
      factory: address,
      tokens: fc.array(address, { minLength: 1, maxLength: 6 }),
      pools: fc.array(address, { minLength: 1, maxLength: 3 }),
      vaults: fc.array(address, { maxLength: 40 }),
      picks: fc.array(fc.nat(), { maxLength: 120 }),
      vaultPools: fc.array(bad ? fc.integer({ min: -2, max: 4 }) : fc.nat({ max: 1_000_000 }), {
        maxLength: 40,
      }),
      extras: fc.array(bad ? fc.integer({ min: -2, max: 1_774_544 }) : fc.nat({ max: 1_774_544 }), {
        maxLength: 30,
      }),
    })
    .map(({ factory, tokens, pools, vaults, picks, vaultPools, extras }) => ({
      factory: factory as Address,
      tokens: tokens as Address[],
      pools: pools as Address[],
      vaults: vaults as Address[],
      vaultTokens: picks.map((i) => tokens[i % tokens.length]!) as Address[],
      vaultPools,
      extras,
    }));
};

const viemArgs = (a: LensArgs) =>
  [
    a.factory,
    a.tokens,
    a.pools,
    a.vaults,
    a.vaultTokens,
    a.vaultPools.map(BigInt),
    a.extras.map(BigInt),
  ] as const;

/** Both give the same text, or both throw. */
function agree(ours: () => string, viem: () => string): void {
  let expected: string | Error;
  try {
    expected = viem();
  } catch (e) {
    expected = e as Error;
  }
  if (expected instanceof Error) expect(ours).toThrow();
  else expect(ours()).toBe(expected);
}

describe('lens call data', () => {
  for (const [name, bad, numRuns] of [
    ['well-formed arguments', false, 500],
    ['arguments with bad values', true, 500],
  ] as const) {
    it(`is viem's encodeFunctionData (read) for ${name}`, () => {
      fc.assert(
        fc.property(lensArgs(bad), (a) =>
          agree(
            () => lensReadData(a),
            () => encodeFunctionData({ abi: vaultLensAbi, functionName: 'read', args: viemArgs(a) }),
          ),
        ),
        { numRuns },
      );
    });

    it(`is viem's encodeDeployData (constructor) for ${name}`, () => {
      fc.assert(
        fc.property(lensArgs(bad), (a) =>
          agree(
            () => lensDeployData(a),
            () => encodeDeployData({ abi: vaultLensAbi, bytecode: vaultLensBytecode, args: viemArgs(a) }),
          ),
        ),
        { numRuns },
      );
    });
  }
});
