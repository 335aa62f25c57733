import { createClient, type ReaderClient } from '@vault-yield/client';
import { createLogger } from '@vault-yield/common';
import { createReader, type Reader, type ReaderConfig, readerConfig } from '@vault-yield/reader';
import type { TestDatabase } from '../index.js';
import { OpenApiValidator } from './openapi-validator.js';

export interface Res {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON body (undefined when not JSON or empty). */
  body: unknown;
}

/** The admin token of test readers: operators' routes (/metrics, /ready's details) need it. */
export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';
export const adminHeaders = { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
/** Paths `get` sends the admin token to, as an operator's scraper and probe would. */
const ADMIN_PATHS = new Set(['/metrics', '/ready']);

export interface TestReader {
  reader: Reader;
  url: string;
  validator: OpenApiValidator;
  /** The typed client (@vault-yield/client) on this reader. */
  client: ReaderClient;
  /**
   * Every response goes through the OpenAPI validator: a mismatch throws. /metrics and /ready
   * are asked with the admin token (unless `headers` carry an Authorization of their own).
   */
  get(path: string, headers?: Record<string, string>): Promise<Res>;
  request(method: string, path: string, headers?: Record<string, string>): Promise<Res>;
  stop(): Promise<void>;
}

/** Starts a reader on a free port against `db` (read-only role) and loads its /openapi.json. */
export async function startReader(
  db: TestDatabase,
  overrides: Partial<ReaderConfig> = {},
): Promise<TestReader> {
  const reader = createReader(
    readerConfig(db.readerUrl, {
      schema: db.schema,
      port: 0,
      host: '127.0.0.1',
      rateLimit: { ratePerSecond: 0, burst: 1, trustedProxies: { kind: 'none' } },
      // No abuse limits in functional tests (one client sends them all): hostile.test.ts sets its own.
      concurrency: { perClient: 0, queue: 16 },
      connections: { perAddress: 0, perIpv6Slash56: 0, perIpv6Slash48: 0 },
      logger: createLogger({ name: 'reader-test', level: 'silent' }),
      adminToken: TEST_ADMIN_TOKEN,
      ...overrides,
    }),
  );
  const { url } = await reader.start();
  const doc = (await (await fetch(`${url}/openapi.json`)).json()) as Record<string, unknown>;
  const validator = new OpenApiValidator(doc);

  async function request(method: string, path: string, headers: Record<string, string> = {}): Promise<Res> {
    const target = new URL(`${url}${path}`);
    const admin =
      ADMIN_PATHS.has(target.pathname) && !Object.keys(headers).some((h) => /^authorization$/i.test(h));
    const res = await fetch(target, { method, headers: admin ? { ...adminHeaders, ...headers } : headers });
    const text = await res.text();
    const contentType = res.headers.get('content-type');
    let body: unknown;
    if (contentType?.startsWith('application/json') && text !== '') body = JSON.parse(text);
    validator.check({
      method,
      path: target.pathname, // as the server sees it (dot segments resolved)
      status: res.status,
      contentType,
      body: body ?? (text === '' ? undefined : text),
    });
    return { status: res.status, headers: res.headers, text, body };
  }

  return {
    reader,
    url,
    validator,
    client: createClient(url),
    get: (path, headers) => request('GET', path, headers),
    request,
    stop: () => reader.stop(),
  };
}

/** Asserts the one error shape (`candidates` only on `ambiguous_vault`) and returns its code. */
export function errorCode(r: Res): string {
  const b = r.body as { error?: { code?: unknown; message?: unknown; candidates?: unknown } } | undefined;
  if (!b?.error || typeof b.error.code !== 'string' || typeof b.error.message !== 'string')
    throw new Error(`not the error shape: ${r.status} ${r.text.slice(0, 200)}`);
  const fields = b.error.code === 'ambiguous_vault' && Array.isArray(b.error.candidates) ? 3 : 2;
  if (Object.keys(b).length !== 1 || Object.keys(b.error).length !== fields)
    throw new Error(`error body has extra fields: ${r.text.slice(0, 200)}`);
  if (/\n\s+at |node_modules|\.ts:\d+/.test(r.text)) throw new Error(`stack trace leaked: ${r.text}`);
  return b.error.code;
}
