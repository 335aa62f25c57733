import { accessSync, constants, readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * How a process reaches Kafka securely: SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) and TLS with
 * an optional CA file. Spread `kafkaSecurityShape` into a service's env schema; `createConfig`
 * then also checks the variables against each other (`kafkaSecurityIssues`).
 */
export type SaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512';

export interface KafkaSecurity {
  sasl?: { mechanism: SaslMechanism; username: string; password: string };
  /**
   * `true`: TLS trusting the system CAs; an object: TLS trusting `ca` only when given (else the
   * system CAs), with a client certificate (`cert` + `key`, PEM) when the brokers ask for one (mTLS).
   */
  ssl?: boolean | KafkaTls;
}

export interface KafkaTls {
  ca?: string[];
  cert?: string;
  key?: string;
}

/** A path to a file this process can read. */
export const readableFile = () =>
  z.string().refine(
    (path) => {
      try {
        accessSync(path, constants.R_OK);
        return true;
      } catch {
        return false;
      }
    },
    { error: 'expected a readable file' },
  );

export const kafkaSecurityShape = {
  KAFKA_SASL_MECHANISM: z
    .string()
    .transform((s) => s.toLowerCase())
    .pipe(
      z.enum(['plain', 'scram-sha-256', 'scram-sha-512'], {
        error: 'expected PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512',
      }),
    )
    .optional(),
  KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
  KAFKA_SSL: z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'expected true or false' })
    .transform((v) => v === 'true' || v === '1' || v === 'yes')
    .default(false),
  /** PEM file of the CA(s) that signed the brokers' certificates; the system CAs when unset. */
  KAFKA_SSL_CA_FILE: readableFile().optional(),
  /** PEM client certificate and its key for brokers that require one (`ssl.client.auth=required`). */
  KAFKA_SSL_CERT_FILE: readableFile().optional(),
  KAFKA_SSL_KEY_FILE: readableFile().optional(),
  /** SASL PLAIN sends the password as is: refused without TLS unless this says so. */
  KAFKA_SASL_ALLOW_PLAINTEXT: z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'expected true or false' })
    .transform((v) => v === 'true' || v === '1' || v === 'yes')
    .default(false),
};

export interface KafkaSecurityEnv {
  KAFKA_SASL_MECHANISM?: SaslMechanism | undefined;
  KAFKA_SASL_USERNAME?: string | undefined;
  KAFKA_SASL_PASSWORD?: string | undefined;
  KAFKA_SSL?: boolean | undefined;
  KAFKA_SSL_CA_FILE?: string | undefined;
  KAFKA_SSL_CERT_FILE?: string | undefined;
  KAFKA_SSL_KEY_FILE?: string | undefined;
  KAFKA_SASL_ALLOW_PLAINTEXT?: boolean | undefined;
}

/** Variables that make sense only together: each problem with the variable it is reported on. */
export function kafkaSecurityIssues(env: KafkaSecurityEnv): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  if (env.KAFKA_SASL_MECHANISM) {
    if (!env.KAFKA_SASL_USERNAME)
      issues.push({ path: 'KAFKA_SASL_USERNAME', message: 'required when KAFKA_SASL_MECHANISM is set' });
    if (!env.KAFKA_SASL_PASSWORD)
      issues.push({ path: 'KAFKA_SASL_PASSWORD', message: 'required when KAFKA_SASL_MECHANISM is set' });
  } else if (env.KAFKA_SASL_USERNAME || env.KAFKA_SASL_PASSWORD) {
    issues.push({
      path: 'KAFKA_SASL_MECHANISM',
      message:
        'required when KAFKA_SASL_USERNAME or KAFKA_SASL_PASSWORD is set (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512)',
    });
  }
  if (env.KAFKA_SASL_MECHANISM === 'plain' && !env.KAFKA_SSL && !env.KAFKA_SASL_ALLOW_PLAINTEXT)
    issues.push({
      path: 'KAFKA_SASL_MECHANISM',
      message:
        'PLAIN sends the password in clear without TLS: set KAFKA_SSL=true, use SCRAM-SHA-256/512, or allow it with KAFKA_SASL_ALLOW_PLAINTEXT=true',
    });
  for (const file of ['KAFKA_SSL_CA_FILE', 'KAFKA_SSL_CERT_FILE', 'KAFKA_SSL_KEY_FILE'] as const)
    if (env[file] && !env.KAFKA_SSL)
      issues.push({ path: 'KAFKA_SSL', message: `must be true when ${file} is set` });
  if (env.KAFKA_SSL_CERT_FILE && !env.KAFKA_SSL_KEY_FILE)
    issues.push({ path: 'KAFKA_SSL_KEY_FILE', message: 'required when KAFKA_SSL_CERT_FILE is set' });
  if (env.KAFKA_SSL_KEY_FILE && !env.KAFKA_SSL_CERT_FILE)
    issues.push({ path: 'KAFKA_SSL_CERT_FILE', message: 'required when KAFKA_SSL_KEY_FILE is set' });
  return issues;
}

/** The log clients' security settings from validated env (reads the CA, certificate and key files). */
export function kafkaSecurity(env: KafkaSecurityEnv): KafkaSecurity {
  const out: KafkaSecurity = {};
  if (env.KAFKA_SASL_MECHANISM && env.KAFKA_SASL_USERNAME && env.KAFKA_SASL_PASSWORD) {
    out.sasl = {
      mechanism: env.KAFKA_SASL_MECHANISM,
      username: env.KAFKA_SASL_USERNAME,
      password: env.KAFKA_SASL_PASSWORD,
    };
  }
  if (env.KAFKA_SSL) {
    const tls: KafkaTls = {};
    if (env.KAFKA_SSL_CA_FILE) tls.ca = [readFileSync(env.KAFKA_SSL_CA_FILE, 'utf8')];
    if (env.KAFKA_SSL_CERT_FILE && env.KAFKA_SSL_KEY_FILE) {
      tls.cert = readFileSync(env.KAFKA_SSL_CERT_FILE, 'utf8');
      tls.key = readFileSync(env.KAFKA_SSL_KEY_FILE, 'utf8');
    }
    out.ssl = Object.keys(tls).length > 0 ? tls : true;
  }
  return out;
}

const SSL_MODES = ['disable', 'no-verify', 'verify-full'] as const;

/**
 * Problems of a Postgres URL's TLS parameters. `sslmode`: disable, no-verify (encrypted, not
 * verified) or verify-full (encrypted, certificate and host verified); `sslrootcert`: the CA file.
 * node-postgres 8 gives require/verify-ca/prefer a meaning of its own (verify-full with a
 * deprecation warning), so they are refused rather than silently differing from libpq.
 */
export function postgresTlsIssue(url: string): string | null {
  let params: URLSearchParams;
  try {
    params = new URL(url).searchParams;
  } catch {
    return 'expected a postgres:// URL';
  }
  const mode = params.get('sslmode');
  if (mode !== null && !(SSL_MODES as readonly string[]).includes(mode)) {
    return `sslmode=${mode} is not supported: use verify-full (with sslrootcert=<CA file> for a private CA), no-verify or disable`;
  }
  const root = params.get('sslrootcert');
  if (root !== null) {
    if (mode === 'disable' || mode === null) return 'sslrootcert needs sslmode=verify-full';
    if (!readableFile().safeParse(root).success) return `sslrootcert ${root}: expected a readable file`;
  }
  return null;
}
