import { createListener } from '@vault-yield/store';
import { type WakeUpSource, WEBHOOK_DEFAULTS } from './config.js';

/**
 * A wake-up source from Postgres `LISTEN channel` (the projector's commit notifications), on the
 * store's listener: each notification wakes the deliverer, and so does each time LISTEN is in
 * force again (notifications sent while it was not are read from the database by the round it
 * starts). A lost connection is made again with backoff; polling covers the gap.
 */
export function listenWakeUp(
  databaseUrl: string,
  channel: string,
  log?: { warn: (o: object, m: string) => void },
): WakeUpSource {
  return async (wake) => {
    const listener = createListener({
      url: databaseUrl,
      applicationName: 'vault-yield-webhooks-listen',
      channel,
      connectTimeoutMs: WEBHOOK_DEFAULTS.connectTimeoutMs,
      onNotify: () => wake(),
      onListening: () => wake(),
      onError: (err, retryInMs) => log?.warn({ err, retryInMs }, 'listen failed; polling meanwhile'),
    });
    return () => listener.close();
  };
}
