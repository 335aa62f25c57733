import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  encodeEventsCursor,
  encodeVaultsCursor,
  eventsQuery,
  parseTime,
  parseVaultName,
  streamQuery,
  vaultsQuery,
} from './params.js';

describe('parseTime', () => {
  it('accepts Unix milliseconds as a plain non-negative integer', () => {
    expect(parseTime('0')).toBe(0);
    expect(parseTime('1735689600000')).toBe(1_735_689_600_000);
    expect(parseTime('8640000000000000')).toBe(8_640_000_000_000_000);
    for (const bad of ['-1', '1.5', '1e3', ' 1', '+1', '0x10', '8640000000000001', '99999999999999999', ''])
      expect(parseTime(bad), bad).toBeNull();
  });

  it('accepts ISO-8601 dates (UTC midnight) and date-times with an offset', () => {
    expect(parseTime('2025-01-01')).toBe(Date.UTC(2025, 0, 1));
    expect(parseTime('2025-01-01T12:30Z')).toBe(Date.UTC(2025, 0, 1, 12, 30));
    expect(parseTime('2025-01-01T12:30:15.5Z')).toBe(Date.UTC(2025, 0, 1, 12, 30, 15, 500));
    expect(parseTime('2025-01-01T12:30:15.123456789Z')).toBe(Date.UTC(2025, 0, 1, 12, 30, 15, 123));
    expect(parseTime('2025-01-01T14:30:00+02:00')).toBe(Date.UTC(2025, 0, 1, 12, 30));
    expect(parseTime('2025-01-01T10:00:00-02:30')).toBe(Date.UTC(2025, 0, 1, 12, 30));
    expect(parseTime('2024-02-29')).toBe(Date.UTC(2024, 1, 29));
  });

  it('rejects impossible or ambiguous dates', () => {
    for (const bad of [
      '2025-01-01T00:00:00', // no offset
      '2025-02-29',
      '2024-02-30',
      '2025-13-01',
      '2025-00-10',
      '2025-01-00',
      '2025-01-01T24:00Z',
      '2025-01-01T23:60Z',
      '2025-01-01T23:59:60Z',
      '2025-01-01T00:00+24:00',
      '1969-12-31T23:59:59Z', // before the epoch
      '2025-1-1',
      '2025-01-01 00:00Z',
    ])
      expect(parseTime(bad), bad).toBeNull();
  });

  it('round-trips any instant through toISOString (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), (ms) => {
        expect(parseTime(new Date(ms).toISOString())).toBe(ms);
        expect(parseTime(String(ms))).toBe(ms);
      }),
    );
  });
});

describe('cursors', () => {
  const parseCursor = (raw: string) => eventsQuery.shape.cursor.safeParse(raw);

  it('events cursor round-trips any keyset position (property)', () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), { nil: undefined }),
        fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
        fc.integer({ min: -1, max: 2 ** 31 - 1 }),
        fc.integer({ min: -1, max: 2 ** 31 - 1 }),
        fc.stringMatching(/^0x[0-9a-f]{64}$/),
        (ts, blockNumber, txIndex, logIndex, blockHash) => {
          const key = { blockNumber, txIndex, logIndex, blockHash, ...(ts === undefined ? {} : { ts }) };
          const c = encodeEventsCursor(key);
          expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
          expect(parseCursor(c)).toEqual({ success: true, data: key });
        },
      ),
    );
  });

  it('reads a time-first cursor (e2) and still accepts the older e1 form, which has no time', () => {
    const hash = `0x${'ab'.repeat(32)}`;
    const e2 = Buffer.from(`e2:1700000000000:12:3:4:${hash}`).toString('base64url');
    expect(parseCursor(e2)).toEqual({
      success: true,
      data: { ts: 1_700_000_000_000, blockNumber: 12, txIndex: 3, logIndex: 4, blockHash: hash },
    });
    const e1 = Buffer.from(`e1:12:3:4:${hash}`).toString('base64url');
    expect(parseCursor(e1)).toEqual({
      success: true,
      data: { blockNumber: 12, txIndex: 3, logIndex: 4, blockHash: hash },
    });
  });

  it('rejects a vaults cursor, garbage and out-of-range numbers', () => {
    for (const bad of [
      encodeVaultsCursor({ vault: `0x${'1'.repeat(40)}`, chainId: 1 }),
      'Zm9v',
      Buffer.from(`e1:9007199254740993:0:0:0x${'0'.repeat(64)}`).toString('base64url'),
      Buffer.from(`e1:1:2147483648:0:0x${'0'.repeat(64)}`).toString('base64url'),
      Buffer.from(`e1:01:0:0:0x${'0'.repeat(64)}`).toString('base64url'),
      Buffer.from(`e1:1:-2:0:0x${'0'.repeat(64)}`).toString('base64url'),
      Buffer.from(`e1:1:0:0:0x${'A'.repeat(64)}`).toString('base64url'),
      Buffer.from(`e2:9007199254740993:1:0:0:0x${'0'.repeat(64)}`).toString('base64url'),
      Buffer.from(`e2:-1:1:0:0:0x${'0'.repeat(64)}`).toString('base64url'),
      Buffer.from(`e2:1:0:0:0x${'0'.repeat(64)}`).toString('base64url'),
      Buffer.from(`e3:1:1:0:0:0x${'0'.repeat(64)}`).toString('base64url'),
    ])
      expect(parseCursor(bad).success, bad).toBe(false);
  });
});

describe('vault names (many chains)', () => {
  const A = `0x${'ab'.repeat(20)}`;
  it('a CAIP-10 id names one vault (address lowercased); a bare address names the address', () => {
    expect(parseVaultName(`eip155:8453:${A.toUpperCase().replace('0X', '0x')}`)).toEqual({
      id: `eip155:8453:${A}`,
      ref: { chainId: 8453, vault: A },
    });
    expect(parseVaultName(`eip155:2147483647:${A}`)).toMatchObject({ ref: { chainId: 2_147_483_647 } });
    expect(parseVaultName(A.toUpperCase().replace('0X', '0x'))).toEqual({ address: A });
  });

  it('rejects a malformed id: chain 0, leading zero, past int4, bad hex, another namespace', () => {
    for (const bad of [
      `eip155:0:${A}`,
      `eip155:01:${A}`,
      `eip155:2147483648:${A}`,
      `eip155:-1:${A}`,
      `eip155::${A}`,
      `eip155:1:${A.slice(0, -1)}`,
      `eip155:1:${A}0`,
      `eip155:1:0x${'g'.repeat(40)}`,
      `cosmos:1:${A}`,
      `1:${A}`,
      A.slice(2),
      '',
    ])
      expect(parseVaultName(bad), bad).toBeNull();
  });

  it('the vaults cursor carries the chain (v2) and still reads v1 (the address alone)', () => {
    const parse = (cursor: string) => vaultsQuery.safeParse({ cursor });
    expect(parse(encodeVaultsCursor({ vault: A, chainId: 10 }))).toMatchObject({
      success: true,
      data: { cursor: { vault: A, chainId: 10 } },
    });
    expect(parse(Buffer.from(`v1:${A}`).toString('base64url'))).toMatchObject({
      success: true,
      data: { cursor: { vault: A } },
    });
    for (const bad of [`v2:${A}:0`, `v2:${A}:2147483648`, `v2:${A}:`, `v3:${A}:1`])
      expect(parse(Buffer.from(bad).toString('base64url')).success, bad).toBe(false);
    expect(vaultsQuery.safeParse({ chainId: '8453' })).toMatchObject({ data: { chainId: 8453 } });
    for (const bad of ['0', '01', '-1', '2147483648', 'x'])
      expect(vaultsQuery.safeParse({ chainId: bad }).success, bad).toBe(false);
  });

  it('a stream filter takes ids and bare addresses, canonical and deduplicated', () => {
    expect(
      streamQuery.safeParse({
        vault: [`eip155:10:${A.toUpperCase().replace('0X', '0x')},${A}`, `eip155:10:${A}`],
      }),
    ).toMatchObject({ success: true, data: { vault: [`eip155:10:${A}`, A] } });
    expect(streamQuery.safeParse({ vault: `eip155:0:${A}` }).success).toBe(false);
  });
});
