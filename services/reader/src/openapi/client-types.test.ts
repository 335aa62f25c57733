import type * as client from '@vault-yield/client';
import { LEDGER_TYPES } from '@vault-yield/client';
import { type ActivityType, activityTypes, type ledgerPayloadSchemas } from '@vault-yield/domain';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type * as s from '../schemas.js';

/**
 * The client (@vault-yield/client) owns the API's types and depends on no service; the reader
 * checks here that what it serves has exactly those types: each response schema's output equals
 * the client's type (a field added, removed or retyped on either side fails `npm run typecheck`),
 * and the ledger's type vocabulary is the same list on both sides (fails at run time too).
 */

type Out<T extends z.ZodType> = z.output<T>;
type Payloads = typeof ledgerPayloadSchemas;
type Columns = Omit<Out<typeof s.ledgerRow>, 'type' | 'data'>;

describe('the client’s types are the served shapes', () => {
  it('bodies: snapshot, equity, vaults, catalogue, universe, errors, health, readiness', () => {
    expectTypeOf<client.Snapshot>().toEqualTypeOf<Out<typeof s.snapshot>>();
    expectTypeOf<client.EquityPoint>().toEqualTypeOf<Out<typeof s.equityPoint>>();
    expectTypeOf<client.VaultSummary>().toEqualTypeOf<Out<typeof s.vaultSummary>>();
    expectTypeOf<client.Strategy>().toEqualTypeOf<Out<typeof s.strategyEntry>>();
    expectTypeOf<client.UniverseAsset>().toEqualTypeOf<Out<typeof s.universeAsset>>();
    expectTypeOf<client.UniversePair>().toEqualTypeOf<Out<typeof s.universePair>>();
    expectTypeOf<client.ErrorBody>().toEqualTypeOf<Out<typeof s.errorBody>>();
    expectTypeOf<client.ErrorCode>().toEqualTypeOf<s.ErrorCode>();
    expectTypeOf<client.Health>().toEqualTypeOf<Out<typeof s.health>>();
    expectTypeOf<client.Ready>().toEqualTypeOf<Out<typeof s.ready>>();
  });

  it('ledger rows: the columns, and the data of every type', () => {
    expectTypeOf<client.LedgerColumns>().toEqualTypeOf<Columns>();
    expectTypeOf<client.LedgerType>().toEqualTypeOf<ActivityType>();
    expectTypeOf<{ [T in client.LedgerType]: client.LedgerData[T] }>().toEqualTypeOf<{
      [T in ActivityType]: Out<Payloads[T]>;
    }>();
  });

  it('the ledger types, in the API’s order', () => {
    expect([...LEDGER_TYPES]).toEqual(activityTypes);
  });
});
