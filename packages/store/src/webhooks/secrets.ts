/**
 * Webhook signing secrets at rest (issue #42): AES-256-GCM under a key from the environment
 * (`WEBHOOK_SECRET_KEY`), a random 96-bit nonce per secret, stored as
 * `v1:<keyId>:<nonce>:<ciphertext>:<tag>` (base64url). The key id (8 hex digits of a hash of the
 * key, which says nothing of the key) names the key a secret was sealed with, so older keys
 * (`WEBHOOK_SECRET_KEYS`) still open secrets until `vault-yield webhooks rekey` seals them under
 * the current one. A dump of webhook_secrets alone cannot sign a delivery.
 *
 * A stored value without the `v1:` prefix is a secret from before encryption (migration 0024
 * moved them as they were): it opens as itself, and `sealPlaintext` encrypts it.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export interface WebhookSecretKey {
  /** 8 hex digits: sha256 over a label and the key. */
  id: string;
  key: Buffer;
}

/** The current key (seals) and every key that may open (the current one and older ones). */
export interface WebhookSecretKeys {
  current: WebhookSecretKey;
  byId: ReadonlyMap<string, WebhookSecretKey>;
}

const PREFIX = 'v1';

/** A 32-byte key from 64 hex digits or base64 (standard or url-safe). The error never shows the text. */
export function parseWebhookSecretKey(text: string, name = 'WEBHOOK_SECRET_KEY'): WebhookSecretKey {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t)
    ? Buffer.from(t, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(t)
      ? Buffer.from(t.replaceAll('-', '+').replaceAll('_', '/'), 'base64')
      : undefined;
  if (key?.length !== 32)
    throw new Error(
      `${name} must be 32 bytes: 64 hex digits or 44 base64 characters (openssl rand -base64 32)`,
    );
  const id = createHash('sha256')
    .update('vault-yield webhook secret key\n')
    .update(key)
    .digest('hex')
    .slice(0, 8);
  return { id, key };
}

/**
 * The keyring: `current` seals, `older` (comma-separated, e.g. `WEBHOOK_SECRET_KEYS`) only open.
 */
export function webhookSecretKeys(current: string, older: readonly string[] = []): WebhookSecretKeys {
  const cur = parseWebhookSecretKey(current);
  const byId = new Map<string, WebhookSecretKey>([[cur.id, cur]]);
  for (const o of older) {
    if (!o.trim()) continue;
    const k = parseWebhookSecretKey(o, 'WEBHOOK_SECRET_KEYS');
    if (!byId.has(k.id)) byId.set(k.id, k);
  }
  return { current: cur, byId };
}

/** Whether a stored secret is sealed (else it is a plaintext from before encryption). */
export const isSealedSecret = (stored: string): boolean => stored.startsWith(`${PREFIX}:`);

/** The key id a stored secret was sealed with (null: plaintext). */
export const sealedKeyId = (stored: string): string | null =>
  isSealedSecret(stored) ? (stored.split(':')[1] ?? null) : null;

/** Seals `secret` under the current key, with a fresh nonce. */
export function sealSecret(secret: string, keys: WebhookSecretKeys): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keys.current.key, nonce);
  const ct = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [PREFIX, keys.current.id, nonce, ct, tag]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join(':');
}

/**
 * The secret a stored value holds: opened with its key, or itself when plaintext. Throws (naming
 * the key id, never a secret) when its key is not in `keys` or it does not authenticate.
 */
export function openSecret(stored: string, keys: WebhookSecretKeys | undefined): string {
  if (!isSealedSecret(stored)) return stored;
  const [, id, nonce, ct, tag] = stored.split(':');
  const k = id ? keys?.byId.get(id) : undefined;
  if (!k || nonce === undefined || ct === undefined || tag === undefined)
    throw new Error(
      `webhook secret sealed with key ${id ?? '?'}, which is not configured (WEBHOOK_SECRET_KEY, WEBHOOK_SECRET_KEYS)`,
    );
  try {
    const d = createDecipheriv('aes-256-gcm', k.key, Buffer.from(nonce, 'base64url'));
    d.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
  } catch {
    throw new Error(`webhook secret sealed with key ${id} does not open with it (altered or another key)`);
  }
}
