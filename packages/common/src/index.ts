export { baseConfigSchema, ConfigError, createConfig, type Env, envField } from './config/index.js';
export { createLogger, type Logger, type LoggerConfig } from './logger/index.js';
export {
  type KafkaSecurity,
  type KafkaSecurityEnv,
  kafkaSecurity,
  kafkaSecurityIssues,
  kafkaSecurityShape,
  postgresTlsIssue,
  readableFile,
  type SaslMechanism,
} from './security/index.js';
export { onShutdown } from './shutdown/index.js';
