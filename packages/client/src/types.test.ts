import { describe, expectTypeOf, it } from 'vitest';
import { createClient, type LedgerRow, type Snapshot, type VaultSummary } from './index.js';

describe('client types (owned by the client; the reader checks its schemas against them)', () => {
  it('paths, parameters and bodies are typed', () => {
    const api = createClient('http://127.0.0.1:1');
    expectTypeOf(api.v1.vault[':address'].snapshot.$get).parameter(0).toEqualTypeOf<{
      param: { address: string };
    }>();
    expectTypeOf<Snapshot['netUsd']>().toEqualTypeOf<number>();
    expectTypeOf<Snapshot['suspension']>().toMatchTypeOf<{ reason: string } | null>();
    expectTypeOf<VaultSummary['owner']>().toEqualTypeOf<string>();
    expectTypeOf<LedgerRow['type']>().toMatchTypeOf<string>();
  });
});
