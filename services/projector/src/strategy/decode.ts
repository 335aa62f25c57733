import { screenResult, strategyCatalogue } from '@vault-yield/domain';

export type StrategyRecordKind = 'screen' | 'catalogue';

export type DecodedStrategyRecord =
  | { ok: true; kind: 'screen'; value: import('@vault-yield/domain').ScreenResult }
  | { ok: true; kind: 'catalogue'; value: import('@vault-yield/domain').StrategyCatalogue }
  | { ok: false; reason: string };

/** Parses one message of a market topic; never throws (bad messages are dead-lettered). */
export function decodeStrategyRecord(kind: StrategyRecordKind, bytes: Buffer | null): DecodedStrategyRecord {
  if (!bytes || bytes.length === 0) return { ok: false, reason: 'empty message' };
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    return { ok: false, reason: `not JSON: ${(e as Error).message}` };
  }
  const parsed = kind === 'screen' ? screenResult.safeParse(json) : strategyCatalogue.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, reason: `schema: ${issue?.path.join('.') || '(root)'}: ${issue?.message}` };
  }
  return kind === 'screen'
    ? { ok: true, kind, value: parsed.data as import('@vault-yield/domain').ScreenResult }
    : { ok: true, kind, value: parsed.data as import('@vault-yield/domain').StrategyCatalogue };
}
