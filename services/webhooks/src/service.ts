import { createContext, type Env } from '@vault-yield/common';
import { STREAM_CHANNEL } from '@vault-yield/store';
import { loadWebhooksEnv, webhookConfigFromEnv } from './config.js';
import { createWebhookDeliverer } from './deliverer.js';
import { listenWakeUp } from './wake.js';

/**
 * The deliverer as a process: its environment read (a bad one throws before anything starts:
 * ConfigError for a refused value, an Error without WEBHOOK_SECRET_KEY), woken by the projector's
 * commit notifications unless WEBHOOK_LISTEN=false, stopped by SIGTERM/SIGINT after the deliveries
 * in flight. Resolves with the exit code: 1 when the deliverer failed. `main.ts` runs it, and so
 * does `vault-yield webhooks run`.
 */
export async function runWebhooks(environment: Env = process.env): Promise<number> {
  const env = loadWebhooksEnv(environment, 'deliverer');
  // The process's one context (no Kafka: the deliverer reads Postgres alone).
  const ctx = createContext({
    service: 'webhooks',
    config: env,
    log: { level: env.LOG_LEVEL, format: env.LOG_FORMAT },
  });
  const { log } = ctx;
  const deliverer = createWebhookDeliverer(
    {
      ...webhookConfigFromEnv(env, log),
      ...(env.WEBHOOK_LISTEN
        ? { wakeUp: listenWakeUp(env.DATABASE_DIRECT_URL ?? env.DATABASE_URL, STREAM_CHANNEL, log) }
        : {}),
    },
    ctx,
  );
  ctx.shutdown(() => deliverer.stop());
  try {
    await deliverer.start();
    await deliverer.done;
    return 0;
  } catch (err) {
    log.fatal({ err }, 'webhook deliverer failed');
    await deliverer.stop().catch(() => {});
    return 1;
  }
}
