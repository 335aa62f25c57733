export { CONFIG_DEFAULTS, MIN_DAILY_RETURNS_RANGE } from './config/defaults.js';
export { doc, type EnvDoc } from './config/doc.js';
export { kafkaEnv, sharedEnv } from './config/fields.js';
export {
  baseConfigSchema,
  ConfigError,
  configInt,
  createConfig,
  type Env,
  envField,
  requireDirectUrl,
} from './config/index.js';
export {
  type Context,
  type ContextOptions,
  createContext,
  type KafkaConnection,
  kafkaConnection,
  securityOf,
} from './context/index.js';
export { createLogger, type LogFormat, type Logger, type LoggerConfig } from './logger/index.js';
export { type HealthCheck, type MetricsSource, serveMetrics } from './metrics/index.js';
export { isSecretName, REDACTED, redactText, redactValue, shownValue } from './redact/index.js';
export {
  type KafkaSecurity,
  type KafkaSecurityEnv,
  type KafkaTls,
  kafkaSecurity,
  kafkaSecurityIssues,
  kafkaSecurityShape,
  postgresTlsIssue,
  type SaslMechanism,
} from './security/index.js';
export { onShutdown } from './shutdown/index.js';
