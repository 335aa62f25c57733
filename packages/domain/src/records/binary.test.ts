import { createHash } from 'node:crypto';
import { legacyRecord, validRecord } from '@vault-yield/test-kit/domain';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BINARY_MAGIC, decodeBinaryRecord, encodeBinaryRecord } from './binary.js';
import { decodeRecord, decodeRecordLazily, encodeRecordAs } from './codec.js';
import { fastParseRecord, type VaultRecord, vaultRecord } from './envelope.js';

/** The record as the JSON path decodes it (lowercased, keys in schema order). */
const canonical = (r: unknown): VaultRecord => {
  const out = fastParseRecord(JSON.parse(JSON.stringify(r)));
  if (!out) throw new Error('arbitrary produced an invalid record');
  return out;
};

describe('binary records', () => {
  it('decode to exactly what the JSON path decodes, keys in the same order', () => {
    fc.assert(
      fc.property(validRecord, (raw) => {
        const r = canonical(raw);
        const bytes = encodeBinaryRecord(r);
        expect(bytes[0]).toBe(BINARY_MAGIC);
        const d = decodeBinaryRecord(bytes);
        if (!d.ok) throw new Error(d.reason);
        // Same text: same values and the same key order (ledger payloads are stored as text).
        expect(JSON.stringify(d.record)).toBe(JSON.stringify(r));
        // Mixed-case input encodes to the same bytes as its lowercase form.
        expect(encodeBinaryRecord(raw as VaultRecord).equals(bytes)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('encode to the bytes they always had (records already in the log must keep their bytes)', () => {
    // The SHA-256 of 300 seeded records' encodings, as the encoder wrote them before its rewrite
    // for speed. Recompute it only when the format changes on purpose, or record.arbitrary.ts does
    // (then with the encoder as it was before the change being tested).
    const h = createHash('sha256');
    for (const r of fc.sample(legacyRecord, { numRuns: 300, seed: 20261125 }))
      h.update(encodeBinaryRecord(r as VaultRecord));
    expect(h.digest('hex')).toBe('04c6dae4bd42c22f50eeba09d14a1ba616bc7e84342ea627c75e6506234ce6b5');
  });

  it('decodeRecord takes either encoding of a record and gives the same record; JSON never starts with the magic byte', () => {
    fc.assert(
      fc.property(validRecord, (raw) => {
        const r = canonical(raw);
        const json = encodeRecordAs(r, 'json');
        const binary = encodeRecordAs(r, 'binary');
        expect(json[0]).not.toBe(BINARY_MAGIC);
        expect(decodeRecord(binary)).toEqual(decodeRecord(json));
        expect(decodeRecord(new Uint8Array(binary))).toEqual({ ok: true, record: r });
        expect(binary.length).toBeLessThan(json.length);
      }),
      { numRuns: 200 },
    );
  });

  it('refuse a record cut short or with bytes left over, saying so', () => {
    fc.assert(
      fc.property(validRecord, fc.nat(), (raw, at) => {
        const bytes = encodeBinaryRecord(canonical(raw));
        const cut = decodeBinaryRecord(bytes.subarray(0, at % bytes.length));
        expect(cut.ok).toBe(false);
        const longer = decodeBinaryRecord(Buffer.concat([bytes, Buffer.from([0])]));
        expect(longer).toEqual({ ok: false, reason: 'binary: 1 bytes left over' });
      }),
      { numRuns: 200 },
    );
  });

  it('never throw on damaged bytes, and whatever they accept is a record the schema accepts', () => {
    fc.assert(
      fc.property(
        validRecord,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        (raw, edits) => {
          const bytes = Buffer.from(encodeBinaryRecord(canonical(raw)));
          for (const [at, value] of edits) bytes[at % bytes.length] = value;
          const d = decodeBinaryRecord(bytes);
          if (d.ok) {
            const parsed = vaultRecord.safeParse(JSON.parse(JSON.stringify(d.record)));
            expect(parsed.success).toBe(true);
            expect(JSON.stringify(parsed.data)).toBe(JSON.stringify(d.record));
          } else expect(d.reason).toMatch(/^binary: /);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('decode lazily (head first, then the whole record) to exactly what decodeRecord gives, or refuse with its reason', () => {
    fc.assert(
      fc.property(
        validRecord,
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }),
        fc.boolean(),
        (raw, edits, json) => {
          const bytes = Buffer.from(encodeRecordAs(canonical(raw), json ? 'json' : 'binary'));
          for (const [at, value] of edits) bytes[at % bytes.length] = value;
          const whole = decodeRecord(bytes);
          const lazy = decodeRecordLazily(bytes);
          if (!lazy.ok) {
            // A head refused means the record is refused, for the same reason.
            expect(whole).toEqual(lazy);
            return;
          }
          expect(lazy.record()).toEqual(whole);
          if (whole.ok) {
            // The head is the record's identity, order, sequence, type and vault.
            // (of a JSON record: the record itself, parsed whole at once).
            const { context: _c, payload: _p, ...head } = whole.record;
            expect(lazy.head).toEqual(json ? whole.record : head);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('refuse what the schema refuses, from the bytes alone', () => {
    const r = canonical(fc.sample(validRecord, { numRuns: 1, seed: 3 })[0]);
    const bytes = encodeBinaryRecord(r);
    expect(decodeBinaryRecord(Buffer.from('{"schemaVersion":3}'))).toEqual({
      ok: false,
      reason: 'binary: not a binary record',
    });
    const version = Buffer.from(bytes);
    version[1] = 4;
    expect(decodeBinaryRecord(version)).toEqual({ ok: false, reason: 'binary: schema version 4' });
    const type = Buffer.from(bytes);
    type[2] = 127; // no type has this code (one byte: below 128)
    expect(decodeBinaryRecord(type)).toEqual({ ok: false, reason: 'binary: unknown type' });
    expect(decodeBinaryRecord(Buffer.alloc(0))).toEqual({ ok: false, reason: 'binary: ends early' });
    // A list longer than the bytes left is refused before anything is allocated for it.
    const table = bytes.indexOf(Buffer.from(r.vault.slice(2), 'hex')) - 1;
    const huge = Buffer.concat([bytes.subarray(0, table), Buffer.from([0xff, 0xff, 0xff, 0x7f])]);
    expect(decodeBinaryRecord(huge)).toEqual({
      ok: false,
      reason: 'binary: a list of 268435455 items in 0 bytes',
    });
  });

  it('carry a vault’s fee rate flagged (flags bit 1), so older records keep their bytes and a cut one is refused', () => {
    const base = canonical(
      fc.sample(
        legacyRecord.filter((r) => r.type === 'vault.created'),
        { numRuns: 1, seed: 7 },
      )[0],
    );
    const old = encodeBinaryRecord(base);
    const withRate = {
      ...base,
      payload: { ...(base.payload as object), performanceFeeBps: 1000 },
    } as VaultRecord;
    const bytes = encodeBinaryRecord(withRate);
    expect(decodeBinaryRecord(bytes)).toEqual({ ok: true, record: withRate });
    expect(decodeBinaryRecord(old)).toEqual({ ok: true, record: base });
    // The same bytes plus the flag and the rate (two varint bytes for 1000).
    expect(bytes.length).toBe(old.length + 2);
    expect(decodeBinaryRecord(bytes.subarray(0, bytes.length - 2)).ok).toBe(false);
    // The flag on a type that has no such field is refused.
    const dep = canonical(
      fc.sample(
        legacyRecord.filter((r) => r.type === 'deposit'),
        { numRuns: 1, seed: 7 },
      )[0],
    );
    const flagged = Buffer.from(encodeBinaryRecord(dep));
    const flagsAt = 3;
    flagged[flagsAt] = flagged[flagsAt]! | 2;
    expect(decodeBinaryRecord(flagged)).toEqual({ ok: false, reason: `binary: flags ${flagged[flagsAt]}` });
  });

  it('refuse to encode a record the schema would refuse, naming it', () => {
    const r = canonical(fc.sample(validRecord, { numRuns: 1, seed: 5 })[0]);
    const withBalance = (amount: string) =>
      ({
        ...r,
        context: {
          ...r.context,
          holdings: { ...r.context.holdings, balances: [{ token: r.vault, amount }] },
        },
      }) as VaultRecord;
    expect(() => encodeBinaryRecord(withBalance('01'))).toThrow(
      /cannot encode record .*expected a number string, got 01/,
    );
    expect(() => encodeBinaryRecord(withBalance('-1'))).toThrow(/expected a number string/);
    expect(() => encodeBinaryRecord({ ...r, vault: '0x12' } as VaultRecord)).toThrow(/expected an address/);
    // The one value the schema allows that the varint of (value − minimum) cannot hold exactly.
    expect(() => encodeBinaryRecord({ ...r, txIndex: Number.MAX_SAFE_INTEGER } as VaultRecord)).toThrow(
      /out of the encoding's range/,
    );
    const edge = encodeBinaryRecord({
      ...r,
      txIndex: Number.MAX_SAFE_INTEGER - 1,
      blockNumber: Number.MAX_SAFE_INTEGER,
    });
    expect(decodeBinaryRecord(edge)).toMatchObject({
      ok: true,
      record: { txIndex: Number.MAX_SAFE_INTEGER - 1, blockNumber: Number.MAX_SAFE_INTEGER },
    });
    expect(() =>
      encodeBinaryRecord({ ...r, type: 'suspended', payload: { reason: 'bad \ud800 text' } } as VaultRecord),
    ).toThrow(/lone surrogate/);
    expect(() =>
      encodeBinaryRecord({
        ...r,
        type: 'position.opened',
        payload: {
          positionId: '1',
          pool: r.vault,
          tickLower: 10,
          tickUpper: 10,
          liquidity: '1',
          amount0: '0',
          amount1: '0',
        },
      } as VaultRecord),
    ).toThrow(/tickLower must be below tickUpper/);
  });

  it('keep a legitimate U+FFFD and refuse invalid UTF-8', () => {
    const r = canonical(fc.sample(validRecord, { numRuns: 1, seed: 9 })[0]);
    const odd = { ...r, type: 'suspended', payload: { reason: 'replaced \ufffd char' } } as VaultRecord;
    const bytes = encodeBinaryRecord(odd);
    const d = decodeBinaryRecord(bytes);
    expect(d.ok && d.record.payload).toEqual({ reason: 'replaced \ufffd char' });
    // The same length of bytes, one of them not UTF-8: read as U+FFFD, which is not what was written.
    const at = bytes.indexOf(Buffer.from('\ufffd', 'utf8'));
    const bad = Buffer.from(bytes);
    bad[at] = 0xff;
    expect(decodeBinaryRecord(bad)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/invalid UTF-8/),
    });
    // Refused again after the good bytes were decoded (and kept for reuse): only accepted bytes are kept.
    expect(decodeBinaryRecord(bytes)).toEqual(d);
    expect(decodeBinaryRecord(bad)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/invalid UTF-8/),
    });
  });

  it('give back a string decoded before only for the same bytes read the same way', () => {
    // The vault's 20 address bytes are the reason's 20 ASCII bytes ('1' is 0x31): the decoder's
    // table of strings met before (binary.ts `recall`) must tell hex from text.
    const r = canonical(fc.sample(validRecord, { numRuns: 1, seed: 9 })[0]);
    const ones = '1'.repeat(20);
    const odd = canonical({
      ...r,
      vault: `0x${'31'.repeat(20)}`,
      type: 'suspended',
      payload: { reason: ones },
    });
    for (let i = 0; i < 3; i++) {
      const d = decodeBinaryRecord(encodeBinaryRecord(odd));
      if (!d.ok) throw new Error(d.reason);
      expect(d.record.vault).toBe(`0x${'31'.repeat(20)}`);
      expect(d.record.payload).toEqual({ reason: ones });
      expect(JSON.stringify(d.record)).toBe(JSON.stringify(odd));
    }
    // A text field's bounds hold for a string met before in a field with other bounds.
    const long = canonical({ ...r, type: 'suspended', payload: { reason: 'x'.repeat(33) } });
    expect(decodeBinaryRecord(encodeBinaryRecord(long)).ok).toBe(true);
    const strategy = encodeBinaryRecord(
      canonical({ ...r, type: 'strategy.selected', payload: { strategy: 'y'.repeat(32) } }),
    );
    const at = strategy.lastIndexOf(Buffer.from('y'.repeat(32)));
    // The same 33 bytes as the reason above, now as a strategy (1..32 characters): refused.
    const tooLong = Buffer.concat([
      strategy.subarray(0, at - 1),
      Buffer.from([33]),
      Buffer.from('x'.repeat(33)),
    ]);
    expect(decodeBinaryRecord(tooLong)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/string of 33 characters/),
    });
  });
});
