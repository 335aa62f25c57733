import { parseArgs } from 'node:util';
import { envField, redactText } from '@vault-yield/common';
import { activityTypes, parseVaultId, vaultId, vaultIdOf } from '@vault-yield/domain';
import {
  createPgPool,
  createWebhookLimits,
  createWebhookStore,
  hasWebhookTables,
  liveRecord,
  type WebhookDelivery,
  type WebhookLimits,
  type WebhookSecretKeys,
  type WebhookStore,
} from '@vault-yield/store';
import {
  type AllowList,
  generateSecret,
  loadWebhooksEnv,
  NOTHING_ALLOWED,
  parseAllowList,
  refusedUrl,
  runWebhooks,
  secretKeysFromEnv,
  type WebhooksEnv,
} from '@vault-yield/webhooks';
import type { Command } from '../command.js';
import { noEnvSchema } from '../config.js';
import { usageError } from '../ops/env.js';

const help = `usage: vault-yield webhooks add URL (--vault VAULT [--vault VAULT] | --all) [--types T,T…] [--description TEXT] [--json]
       vault-yield webhooks list [--json]
       vault-yield webhooks enable ID
       vault-yield webhooks remove ID
       vault-yield webhooks deliveries [--endpoint ID] [--failed] [--limit N] [--json]
       vault-yield webhooks retry [--endpoint ID] [--id N]
       vault-yield webhooks rekey
       vault-yield webhooks run

Callbacks: every ledger row of a matching vault and type is POSTed to each endpoint as JSON,
signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature), at least once and
in order per vault (a vault is its chain and address: each row's data carries its chainId). See the README, "Callbacks (webhooks)", for the payload and how a receiver
verifies it.

  add         registers an endpoint (http:// or https:// only) for the vaults given (--vault,
              repeatable or comma-separated: a vault id eip155:CHAIN:0x… names that vault on
              that chain, a bare address 0x… that address on every chain) or every vault of
              every chain (--all), and the ledger types given
              (--types, default every type); rows that enter the ledger from now on are delivered.
              Prints its id and its signing secret (whsec_…): the secret is shown this once.
  list        the endpoints (URLs shown without their path, query or password), with their
              deliveries pending, delivered (kept WEBHOOK_RETENTION_MS) and parked
  enable      enables an endpoint disabled by a 410 Gone answer (list shows it DISABLED): its
              cursor resumes where it stopped; \`retry --endpoint ID\` sends its parked rows again
  remove      removes an endpoint, its cursor and its deliveries
  deliveries  the latest deliveries (--failed: the parked ones), newest first
  retry       sends parked deliveries again (all, one endpoint's, or the one --id N): they go back
              in their vault's queue before the rows queued after them, and are retried for
              another WEBHOOK_RETRY_PERIOD_MS
  rekey       seals every signing secret under WEBHOOK_SECRET_KEY (those under an older key of
              WEBHOOK_SECRET_KEYS, and plaintext ones from before encryption); then the older
              keys can go (README, "Rotating the secrets' key")
  run         the deliverer (one per WEBHOOKS_SCHEMA sends at a time; another waits as a standby),
              as services/webhooks/src/main.ts runs it. SIGTERM/SIGINT: finishes the deliveries in
              flight, then exits

Retries: 5xx, 408, 429 (its Retry-After honoured), time-outs and connection errors are retried with
exponential backoff and jitter until WEBHOOK_RETRY_PERIOD_MS after the delivery was queued; a
failure after that parks it. Any other answer that is not 2xx (another 4xx, a 3xx: redirects are
not followed) parks it at once; 410 Gone also disables the endpoint (\`enable\` resumes it). A
parked delivery does not hold back its vault's later rows; parked rows are deleted after
WEBHOOK_PARKED_RETENTION_MS.

Limits: at most WEBHOOK_ENDPOINT_CONCURRENCY deliveries in flight per endpoint (of
WEBHOOK_CONCURRENCY), due rows taken round robin over endpoints; after WEBHOOK_BREAKER_FAILURES
failures in a row, or when it has failed for WEBHOOK_BREAKER_FAILING_MS whatever the count (its
attempts hang until the time-out), an endpoint is paused; one probe every WEBHOOK_BREAKER_PROBE_MS
resumes it.

Refused: URLs with credentials (user:pass@), other schemes, and hosts inside the network:
loopback, private (RFC 1918, fc00::/7), link-local (169.254/16 with the metadata address,
fe80::/10), CGNAT, multicast, unspecified, reserved, in any spelling (2130706433, 0177.0.0.1,
127.1, ::ffff:127.0.0.1, NAT64) — at add for a literal address, at delivery for every address a
name resolves to (the connection goes to the address checked). WEBHOOK_ALLOW_NETWORKS (CIDRs)
allows networks of your own. A delivery that got no answer shows no connection detail.

options:
  --vault VAULT     a vault to deliver: eip155:CHAIN:0x… (one chain) or 0x… (that address on
                    every chain); repeatable, or comma-separated
  --all             every vault of every chain, present and future
  --types T,T…      ledger types (${activityTypes.join(', ')})
  --description T   a note shown by list
  --endpoint ID     one endpoint
  --failed          parked deliveries only
  --id N            one delivery
  --limit N         deliveries shown (default 50)
  --json            JSON output

environment:
  DATABASE_URL (required; as the migrator or vault_yield_webhooks: no other role may read the
  webhook tables), WEBHOOK_SECRET_KEY (required by run, add, rekey), WEBHOOK_SECRET_KEYS, WEBHOOKS_SCHEMA (default PROJECTION_SCHEMA), PROJECTION_SCHEMA,
  VIEWS_SCHEMA, WEBHOOK_POLL_INTERVAL_MS, WEBHOOK_LISTEN, WEBHOOK_TIMEOUT_MS,
  WEBHOOK_RETRY_PERIOD_MS, WEBHOOK_BACKOFF_BASE_MS, WEBHOOK_BACKOFF_MAX_MS, WEBHOOK_CONCURRENCY,
  WEBHOOK_SCAN_BATCH, WEBHOOK_RETENTION_MS, WEBHOOK_PARKED_RETENTION_MS, WEBHOOK_ALLOW_NETWORKS,
  WEBHOOK_ENDPOINT_CONCURRENCY, WEBHOOK_BREAKER_FAILURES, WEBHOOK_BREAKER_FAILING_MS, WEBHOOK_BREAKER_PROBE_MS, WEBHOOK_STATEMENT_TIMEOUT_MS, METRICS_PORT, METRICS_HOST,
  LOG_LEVEL, LOG_FORMAT`;

const SUBCOMMANDS = ['add', 'list', 'enable', 'remove', 'deliveries', 'retry', 'rekey', 'run'] as const;
type Sub = (typeof SUBCOMMANDS)[number];

/**
 * An endpoint URL: http(s) only, parsed, without credentials, its host not a forbidden address in
 * any spelling (unless `allow` has it; the deliverer checks again what a name resolves to); shown
 * redacted in every error.
 */
export function endpointUrl(text: string, allow: AllowList = NOTHING_ALLOWED): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(`webhooks add: not a URL: ${redactText(text)}`);
  }
  const refused = refusedUrl(url, allow);
  if (refused) throw usageError(`webhooks add: refused: ${refused}`);
  return url.toString();
}

/** The queue's bounds (disabled endpoints, parked rows) on a pool of its own. */
async function withLimits<T>(env: WebhooksEnv, fn: (limits: WebhookLimits) => Promise<T>): Promise<T> {
  const pool = createPgPool({
    url: env.DATABASE_URL,
    applicationName: 'vault-yield-webhooks-cli',
    max: 1,
    pooling: env.DATABASE_POOLING,
  });
  try {
    return await fn(createWebhookLimits(pool, env.WEBHOOKS_SCHEMA ?? env.PROJECTION_SCHEMA));
  } finally {
    await pool.end();
  }
}

const positiveInt = (option: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  if (!/^[1-9]\d{0,15}$/.test(value))
    throw usageError(`--${option} must be a positive integer, got ${value}`);
  return Number(value);
};

function deliveryLine(d: WebhookDelivery): string {
  const when = (d.doneAt ?? d.lastAttemptAt ?? d.createdAt).toISOString();
  const last = d.lastStatus !== null ? `HTTP ${d.lastStatus}` : (d.lastError ?? '-');
  const detail = d.state === 'pending' && d.attempts > 0 ? `  next ${d.nextAttemptAt.toISOString()}` : '';
  return `${String(d.id).padStart(8)}  ep ${d.endpointId}  ${d.state.padEnd(9)}  ${d.msgId}  ${vaultIdOf(d)}  ${d.type}  block ${d.blockNumber}  attempts ${d.attempts}  ${last}${d.lastError && d.lastStatus !== null ? ` (${d.lastError})` : ''}  ${when}${detail}`;
}

async function withStore<T>(
  env: WebhooksEnv,
  fn: (store: WebhookStore, ledgerSchema: () => Promise<string>) => Promise<T>,
  keys?: WebhookSecretKeys,
): Promise<T> {
  const schema = env.WEBHOOKS_SCHEMA ?? env.PROJECTION_SCHEMA;
  const pool = createPgPool({
    url: env.DATABASE_URL,
    applicationName: 'vault-yield-webhooks-cli',
    max: 1,
    pooling: env.DATABASE_POOLING,
  });
  try {
    if (!(await hasWebhookTables(pool, schema)))
      throw usageError(
        `schema ${schema} has no webhook tables: run \`vault-yield migrate\` first (migration 0020)`,
      );
    const store = createWebhookStore(pool, schema, keys);
    // With the key at hand, secrets from before encryption are sealed first (idempotent).
    if (keys) await store.sealPlaintext();
    return await fn(
      store,
      async () => (await liveRecord(pool, env.VIEWS_SCHEMA))?.schema ?? env.PROJECTION_SCHEMA,
    );
  } finally {
    await pool.end();
  }
}

export const webhooksCommand: Command<typeof noEnvSchema> = {
  // The webhooks service's own schema (loadWebhooksEnv), as its process reads it.
  env: noEnvSchema,
  log: { name: 'webhooks' },
  help,
  async run(argv) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        vault: { type: 'string', multiple: true },
        all: { type: 'boolean' },
        types: { type: 'string' },
        description: { type: 'string' },
        endpoint: { type: 'string' },
        failed: { type: 'boolean' },
        id: { type: 'string' },
        limit: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    const sub = positionals[0] as Sub | undefined;
    if (!sub || !SUBCOMMANDS.includes(sub)) {
      console.error(
        `webhooks: expected one of ${SUBCOMMANDS.join(', ')}, got ${sub ?? 'nothing'}\n\n${help}`,
      );
      return 2;
    }
    // The deliverer is its own service (services/webhooks, compose's `webhooks`); `run` starts the
    // same, for the docs and compose files that name it.
    if (sub === 'run') return runWebhooks(process.env);
    const env = loadWebhooksEnv(process.env, 'admin');

    if (sub === 'add') {
      const [, rawUrl, ...extra] = positionals;
      if (!rawUrl || extra.length > 0) throw usageError('webhooks add: expected one URL');
      const url = endpointUrl(rawUrl, parseAllowList(env.WEBHOOK_ALLOW_NETWORKS));
      const vaults = (values.vault ?? [])
        .flatMap((v) => v.split(','))
        .map((v) => v.trim())
        .filter(Boolean);
      if (values.all && vaults.length > 0)
        throw usageError('webhooks add: --vault and --all exclude each other');
      if (!values.all && vaults.length === 0)
        throw usageError('webhooks add: give --vault eip155:CHAIN:0x… or 0x… (one or more) or --all');
      const filter = vaults.map((v) => {
        const ref = parseVaultId(v);
        if (ref) return vaultId(ref.chainId, ref.vault);
        if (/^0x[0-9a-fA-F]{40}$/.test(v)) return v.toLowerCase();
        throw usageError(
          `--vault ${v}: expected a vault id eip155:CHAIN:0x… (CHAIN a positive integer, 40 hex digits) or an address 0x… (every chain)`,
        );
      });
      let types: string[] | null = null;
      if (values.types !== undefined) {
        types = [
          ...new Set(
            values.types
              .split(',')
              .map((t) => t.trim())
              .filter(Boolean),
          ),
        ];
        const known: readonly string[] = activityTypes;
        const unknown = types.filter((t) => !known.includes(t));
        if (unknown.length > 0 || types.length === 0)
          throw usageError(
            `--types ${values.types}: unknown type ${unknown.join(', ') || '(none given)'}; known: ${activityTypes.join(', ')}`,
          );
      }
      const keys = secretKeysFromEnv(env, 'webhooks add');
      const secret = generateSecret();
      const endpoint = await withStore(
        env,
        async (store, ledgerSchema) =>
          store.addEndpoint({
            url,
            secret,
            vaults: values.all ? null : [...new Set(filter)],
            types,
            ...(values.description ? { description: values.description } : {}),
            ledgerSchema: await ledgerSchema(),
          }),
        keys,
      );
      if (values.json)
        console.log(
          JSON.stringify(
            { id: endpoint.id, secret, url: redactText(url), vaults: endpoint.vaults, types: endpoint.types },
            null,
            2,
          ),
        );
      else
        console.log(
          [
            `endpoint ${endpoint.id}: ${redactText(url)}`,
            `  vaults: ${endpoint.vaults ? endpoint.vaults.join(', ') : 'all'}`,
            `  types:  ${endpoint.types ? endpoint.types.join(', ') : 'all'}`,
            `  secret: ${secret}`,
            '  (the secret is shown this once: give it to the receiver, which verifies each delivery with it)',
          ].join('\n'),
        );
      return 0;
    }

    if (sub === 'list') {
      const [list, secrets] = await withStore(env, (store) =>
        Promise.all([store.listEndpoints(), store.secretsState()]),
      );
      if (secrets.plaintext > 0)
        console.error(
          `warning: ${secrets.plaintext} signing secret${secrets.plaintext === 1 ? ' is' : 's are'} still plaintext in the database: run the deliverer or \`webhooks rekey\` with WEBHOOK_SECRET_KEY to seal ${secrets.plaintext === 1 ? 'it' : 'them'}`,
        );
      const disabled = new Map((await withLimits(env, (l) => l.disabledEndpoints())).map((d) => [d.id, d]));
      const shown = list.map((e) => ({
        ...e,
        url: redactText(e.url),
        disabled: disabled.has(e.id)
          ? { at: disabled.get(e.id)?.disabledAt, reason: disabled.get(e.id)?.reason }
          : null,
      }));
      if (values.json) console.log(JSON.stringify(shown, null, 2));
      else if (shown.length === 0) console.log('no webhook endpoints');
      else
        for (const e of shown)
          console.log(
            `${String(e.id).padStart(4)}  ${e.url}  vaults ${e.vaults ? e.vaults.join(',') : 'all'}  types ${e.types ? e.types.join(',') : 'all'}  pending ${e.pending}  delivered ${e.delivered}  parked ${e.parked}${e.disabled ? `  DISABLED (${e.disabled.reason})` : ''}${e.description ? `  "${e.description}"` : ''}`,
          );
      return 0;
    }

    if (sub === 'enable') {
      const id = positiveInt('id', positionals[1]);
      if (id === undefined)
        throw usageError('webhooks enable: expected an endpoint ID (see `webhooks list`)');
      if (!(await withLimits(env, (l) => l.enableEndpoint(id)))) {
        console.error(`webhooks enable: no endpoint ${id}`);
        return 1;
      }
      console.log(
        `endpoint ${id} enabled: rows from where its cursor stopped are queued; \`webhooks retry --endpoint ${id}\` sends its parked ones again`,
      );
      return 0;
    }

    if (sub === 'remove') {
      const id = positiveInt('id', positionals[1]);
      if (id === undefined)
        throw usageError('webhooks remove: expected an endpoint ID (see `webhooks list`)');
      const removed = await withStore(env, (store) => store.removeEndpoint(id));
      if (!removed) {
        console.error(`webhooks remove: no endpoint ${id}`);
        return 1;
      }
      console.log(`endpoint ${id} removed`);
      return 0;
    }

    if (sub === 'deliveries') {
      const endpointId = positiveInt('endpoint', values.endpoint);
      const limit =
        values.limit === undefined ? 50 : envField.int(1, 10_000).parse(positiveInt('limit', values.limit));
      const list = await withStore(env, (store) =>
        store.listDeliveries({
          limit,
          ...(endpointId === undefined ? {} : { endpointId }),
          ...(values.failed ? { state: 'parked' as const } : {}),
        }),
      );
      if (values.json) console.log(JSON.stringify(list, null, 2));
      else if (list.length === 0) console.log(values.failed ? 'no parked deliveries' : 'no deliveries');
      else for (const d of list) console.log(deliveryLine(d));
      return 0;
    }

    if (sub === 'rekey') {
      const keys = secretKeysFromEnv(env, 'webhooks rekey');
      const [n, state] = await withStore(
        env,
        async (store) => [await store.rekey(), await store.secretsState()] as const,
        keys,
      );
      const others = Object.keys(state.sealed).filter((id) => id !== keys.current.id);
      console.log(
        `${n} signing secret${n === 1 ? '' : 's'} sealed again under key ${keys.current.id}; ${
          others.length === 0 && state.plaintext === 0
            ? 'every secret is under it: WEBHOOK_SECRET_KEYS may drop the older keys'
            : `still under other keys: ${others.join(', ') || 'none'}, plaintext: ${state.plaintext}`
        }`,
      );
      return 0;
    }

    // retry
    const endpointId = positiveInt('endpoint', values.endpoint);
    const id = positiveInt('id', values.id);
    const n = await withStore(env, (store) =>
      store.retryParked({
        deadline: new Date(Date.now() + env.WEBHOOK_RETRY_PERIOD_MS),
        ...(id === undefined ? {} : { id }),
        ...(endpointId === undefined ? {} : { endpointId }),
      }),
    );
    if (id !== undefined && n === 0) {
      console.error(`webhooks retry: no parked delivery ${id}`);
      return 1;
    }
    console.log(`${n} parked deliver${n === 1 ? 'y' : 'ies'} queued again`);
    return 0;
  },
};
