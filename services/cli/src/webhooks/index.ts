/**
 * Callbacks (webhooks): the deliverer process (`vault-yield webhooks run`) and what it is made of.
 * SQL lives in the store (packages/store/src/webhooks); the README's "Callbacks (webhooks)"
 * section is the receiver's side.
 */

export {
  type AllowList,
  forbiddenReason,
  parseAllowList,
  type Resolve,
  type ResolvedAddress,
  refusedUrl,
  systemResolve,
} from './address.js';
export {
  loadWebhooksEnv,
  type ResolvedWebhookDelivererConfig,
  type WakeUpSource,
  WEBHOOK_DEFAULTS,
  type WebhookDelivererConfig,
  type WebhooksEnv,
  webhookConfigFromEnv,
  webhookDelivererConfigSchema,
  webhooksEnvSchema,
} from './config.js';
export {
  type AttemptResult,
  attempt,
  backoffDelay,
  classify,
  createWebhookDeliverer,
  listenWakeUp,
  type WebhookDeliverer,
} from './deliverer.js';
export { createWebhookMetrics, type WebhookMetrics } from './metrics.js';
export { generateSecret, SECRET_PREFIX, secretKey, signature, webhookHeaders } from './sign.js';
