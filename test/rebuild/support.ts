import { createLogAdmin } from '@vault-yield/log';
import { type Pool, storedOffsetRows } from '@vault-yield/store';
import { kafkaBrokers } from '@vault-yield/test-kit';

/**
 * Waits until `schema` has applied everything `topic` holds under `group` (its stored offsets at
 * the topic's high watermarks), or throws after `timeoutMs`.
 */
export async function caughtUp(
  pool: Pick<Pool, 'query'>,
  schema: string,
  group: string,
  topic: string,
  timeoutMs = 60_000,
): Promise<void> {
  const admin = await createLogAdmin({ brokers: kafkaBrokers(), clientId: 'rebuild-test-caught-up' });
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const high = await admin.offsets(topic);
      const stored = new Map(
        (await storedOffsetRows(pool, schema, { groupId: group, topic })).map((r) => [
          r.partition,
          Number(r.nextOffset),
        ]),
      );
      if (high.every((h) => (stored.get(h.partition) ?? 0) >= Number(h.high))) return;
      if (Date.now() > deadline) throw new Error(`${schema} (group ${group}) never caught up with ${topic}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await admin.close();
  }
}
