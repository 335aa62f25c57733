/**
 * Callbacks (webhooks): the deliverer service (`services/webhooks/src/main.ts`; `vault-yield
 * webhooks run` starts the same) and what it is made of. Its SQL lives in the store
 * (packages/store/src/webhooks); the README's "Callbacks (webhooks)" section is the receiver's side.
 */

export {
  type AllowList,
  forbiddenReason,
  NOTHING_ALLOWED,
  parseAllowList,
  type Resolve,
  type ResolvedAddress,
  refusedUrl,
  systemResolve,
} from './address.js';
export {
  type AttemptResult,
  attempt,
  type Backoff,
  backoffDelay,
  classify,
  type Destinations,
  outcomeOf,
} from './attempt.js';
export { type BreakerConfig, type Breakers, createBreakers } from './breaker.js';
export {
  loadWebhooksEnv,
  type ResolvedWebhookDelivererConfig,
  secretKeysFromEnv,
  type WakeUpSource,
  WEBHOOK_DEFAULTS,
  type WebhookDelivererConfig,
  type WebhooksEnv,
  webhookConfigFromEnv,
  webhookDelivererConfigSchema,
  webhooksEnvSchema,
} from './config.js';
export { createWebhookDeliverer, type WebhookDeliverer } from './deliverer.js';
export { createDelivererLock, type DelivererLock, LockLost } from './lock.js';
export { createWebhookMetrics, type WebhookMetrics } from './metrics.js';
export { runWebhooks } from './service.js';
export { generateSecret, SECRET_PREFIX, signature, webhookHeaders } from './sign.js';
export { listenWakeUp } from './wake.js';
