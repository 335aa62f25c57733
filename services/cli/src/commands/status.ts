import { parseArgs } from 'node:util';
import { envField, redactText } from '@vault-yield/common';
import { FOLD_VERSION, vaultId } from '@vault-yield/domain';
import { createLogAdmin, type LogAdmin } from '@vault-yield/log';
import {
  type BuildRecord,
  createPgPool,
  type DeadLetterCount,
  type DeadLetterEntry,
  deadLetterCounts,
  type HeldVaultRow,
  heldVaultRows,
  indexerCheckpoints,
  listBuilds,
  listDeadLetters,
  liveRecord,
  liveSchemaProblem,
  projectionFoldVersion,
  projectionFreshness,
  type StalePriceRow,
  stalePriceRows,
  storedOffsetRows,
  WEBHOOKS_ROLE,
  webhookSecretsStatus,
} from '@vault-yield/store';
import type { Command } from '../command.js';
import { statusEnvSchema } from '../config.js';
import { optionValue } from '../ops/env.js';
import { liveSources } from '../ops/live-topics.js';
import { letterVault } from './dead-letters.js';

export interface PartitionLag {
  partition: number;
  stored: string | null;
  high: string | null;
  lag: number | null;
}

export interface StatusReport {
  viewsSchema: string;
  /**
   * The schema served: the views' live schema, else (never switched) $PROJECTION_SCHEMA; null when
   * that schema is dead (dropped, or the views no longer stand on it): never named live then.
   */
  liveSchema: string | null;
  /** Why no schema is live (`liveSchema` null): what the views' record names and what is wrong with it. */
  liveProblem?: string;
  switchedAt: string | null;
  /** The fold version of the live projection's figures (null: before migration 0015) and this build's. */
  fold: { projection: number | null; build: number };
  /** `--chain N`: the indexer, held vaults and stale prices of that chain only (null: every chain). */
  chain: number | null;
  indexer: {
    schema: string;
    /** RPC_URL's head: of the chain `rpcChainId` (its node's), the one checkpoint `behind` is counted for. */
    chainHead: number | null;
    /** The chain RPC_URL's node is of (eth_chainId); null without RPC_URL or when it did not answer. */
    rpcChainId: number | null;
    chainError?: string;
    checkpoints: {
      chainId: number;
      blockNumber: number;
      blockHash: string;
      /** The topic it is the checkpoint of; null when written before migration 0008. */
      topic: string | null;
      updatedAt: string;
      /** RPC_URL's head minus the checkpoint; null unless RPC_URL is a node of this chain. */
      behind: number | null;
    }[];
  };
  projector: {
    group: string;
    topic: string;
    lag: number | null;
    partitions: PartitionLag[];
    topicError?: string;
  }[];
  /**
   * How far the live projection is behind the log (records: high watermarks minus stored offsets,
   * the furthest group per partition; null without KAFKA_BROKERS) and the chain (blocks, seconds:
   * the indexer's checkpoint minus the newest record folded; 0 when no record is left to fold) —
   * the figures the reader's /ready judges.
   */
  /** `chainId`: the chain blocks and seconds are of (the one furthest behind; block numbers of two chains are never compared). */
  freshness: {
    records: number | null;
    blocks: number | null;
    seconds: number | null;
    chainId: number | null;
  } | null;
  deadLetters: DeadLetterCount[];
  /** Prices older than their feed's heartbeat in current snapshots (oldest first, at most 50). */
  stalePrices: StalePriceRow[];
  /** Vaults held behind a gap in their stream (at most 50): what to republish. */
  held: HeldVaultRow[];
  /** The first dead letters (at most 20), so none goes unnoticed. */
  deadLetterList: DeadLetterEntry[];
  builds: { schema: string; purpose: string; state: string; group: string; topic: string }[];
  /**
   * The webhooks' signing secrets in `schema`: how many are still plaintext (not sealed under
   * WEBHOOK_SECRET_KEY; `vault-yield webhooks rekey` seals them) and how many sealed — null counts
   * when this role may not read the secrets (only the migrator and vault_yield_webhooks may): it
   * cannot tell, which is not 0. Absent without webhook tables.
   */
  webhookSecrets?: {
    schema: string;
    plaintext: number | null;
    sealed: number | null;
    role?: string;
    /** Where they are: `webhook_endpoints` before migration 0025 (then `migrate` moves them). */
    table: 'webhook_secrets' | 'webhook_endpoints';
  };
}

export const statusCommand: Command<typeof statusEnvSchema> = {
  env: statusEnvSchema,
  log: { name: 'status' },
  help: `usage: vault-yield status [--chain N] [--json]

Reports, for operators:
  - the live projection schema (the target of the reader's views schema, else $PROJECTION_SCHEMA);
    a schema that no longer exists, or that the views no longer stand on, is never named live:
    status says so and how to switch the views
  - freshness: how far the live projection is behind the log (the high watermarks of the topic
    it folds — its build's, else its stored offsets'; $KAFKA_TOPIC before it folded any — minus
    its stored offsets) and the chain (the indexer's checkpoint minus the newest block
    folded), the figures the reader's /ready judges
  - the indexer: its checkpoint per chain (indexer_checkpoint), the topic it is the checkpoint of,
    and, when RPC_URL is set, the chain head (eth_blockNumber) and how many blocks the indexer is
    behind on the chain of RPC_URL's node (eth_chainId; another chain's head is its own node's)
  - the projector lag per group, topic and partition: the topic's high watermark minus the next
    offset stored with the live projection (needs KAFKA_BROKERS)
  - dead letters per topic in the live schema, and the builds recorded by rebuild/verify/reindex
  - held vaults (by vault id, eip155:CHAIN:0x…): a record of the vault's stream is missing
    (sequence gap); the projector holds the vault until \`vault-yield republish\` publishes the
    missing range again (the command is printed; run it with that chain's RPC_URL and CHAIN_ID)
  - stale prices: vaults whose current value uses a price older than its feed's heartbeat
  - the fold version of the live projection's figures against this build's: an older one means
    \`vault-yield rebuild\` (the figures of vaults with several records in one block differ)
  - webhook signing secrets still stored in plaintext (not sealed under WEBHOOK_SECRET_KEY):
    \`vault-yield webhooks rekey\` seals them. Only the migrator and vault_yield_webhooks may read
    the secrets: as another role status says it cannot tell

options:
  --chain N  the indexer, held vaults and stale prices of chain N only (default: every chain);
             the projector, freshness and dead letters are the log's, of every chain
  --json     one JSON document on stdout

environment:
  DATABASE_URL (required); KAFKA_BROKERS; RPC_URL; VIEWS_SCHEMA (vault_yield_api);
  PROJECTION_SCHEMA (vault_yield); INDEXER_SCHEMA (default PROJECTION_SCHEMA);
  WEBHOOKS_SCHEMA (default PROJECTION_SCHEMA)`,
  async run(argv, context) {
    const { values } = parseArgs({
      args: argv,
      options: { json: { type: 'boolean', default: false }, chain: { type: 'string' } },
    });
    const chain = values.chain === undefined ? null : optionValue('chain', envField.int(1), values.chain);
    const ofChain = <T extends { chainId: number }>(rows: T[]): T[] =>
      chain === null ? rows : rows.filter((r) => r.chainId === chain);
    const { config: env, kafka } = context();
    const pool = createPgPool({ url: env.DATABASE_URL, applicationName: 'vault-yield-status', max: 2 });
    let admin: LogAdmin | null = null;
    try {
      const live = await liveRecord(pool, env.VIEWS_SCHEMA);
      const candidate = live?.schema ?? env.PROJECTION_SCHEMA;
      const problem = await liveSchemaProblem(pool, env.VIEWS_SCHEMA, candidate, live !== null);
      const liveProblem = problem
        ? live
          ? `${env.VIEWS_SCHEMA} names ${candidate} live, but ${problem}: switch the views to a live schema (vault-yield rebuild switch --schema NAME, or rebuild)`
          : `${problem} (views ${env.VIEWS_SCHEMA} never switched)`
        : undefined;
      // A dead schema is never reported live; the sections below read nothing from it.
      const liveSchema = problem ? null : candidate;
      const readSchema = liveSchema ?? candidate;
      const indexerSchema = env.INDEXER_SCHEMA ?? env.PROJECTION_SCHEMA;

      let chainHead: number | null = null;
      let rpcChainId: number | null = null;
      let chainError: string | undefined;
      if (env.RPC_URL) {
        try {
          // viem loads only when there is a chain to ask (a fast start-up otherwise).
          const { createChainClient, getChainIdFromNode, getHeadNumber } = await import('@vault-yield/chain');
          const client = createChainClient({
            rpcUrl: env.RPC_URL,
            cacheTime: 0,
            retryCount: 1,
            timeoutMs: 5000,
          });
          // The node is one chain's: its head says how far behind that chain's checkpoint is.
          [rpcChainId, chainHead] = await Promise.all([getChainIdFromNode(client), getHeadNumber(client)]);
        } catch (err) {
          chainError = redactText((err as Error).message.split('\n')[0] ?? '');
          chainHead = null;
          rpcChainId = null;
        }
      }
      const checkpoints = ofChain(await indexerCheckpoints(pool, indexerSchema)).map((c) => ({
        chainId: c.chainId,
        blockNumber: c.blockNumber,
        blockHash: c.blockHash,
        topic: c.topic,
        updatedAt: c.updatedAt.toISOString(),
        behind:
          chainHead === null || rpcChainId !== c.chainId ? null : Math.max(0, chainHead - c.blockNumber),
      }));

      const offsets = await storedOffsetRows(pool, readSchema);
      const groups = new Map<string, typeof offsets>();
      for (const r of offsets) {
        const k = `${r.groupId}\u0000${r.topic}`;
        groups.set(k, [...(groups.get(k) ?? []), r]);
      }
      if (kafka) admin = await createLogAdmin({ ...kafka, clientId: 'vault-yield-status' });
      const projector: StatusReport['projector'] = [];
      for (const rows of groups.values()) {
        const { groupId, topic } = rows[0] as (typeof offsets)[number];
        const stored = new Map(
          rows.map((r) => [r.partition, BigInt(r.nextOffset) < 0n ? 0n : BigInt(r.nextOffset)]),
        );
        let high: Map<number, bigint> | null = null;
        let topicError: string | undefined;
        if (admin) {
          try {
            high = new Map((await admin.offsets(topic)).map((o) => [o.partition, BigInt(o.high)]));
          } catch (err) {
            topicError = redactText((err as Error).message.split('\n')[0] ?? '');
          }
        }
        const parts = [...new Set([...stored.keys(), ...(high?.keys() ?? [])])].sort((a, b) => a - b);
        const partitions: PartitionLag[] = parts.map((p) => {
          const s = stored.get(p) ?? 0n;
          const h = high?.get(p);
          return {
            partition: p,
            stored: stored.has(p) ? s.toString() : null,
            high: h === undefined ? null : h.toString(),
            lag: h === undefined ? null : Number(h > s ? h - s : 0n),
          };
        });
        const lag = high ? partitions.reduce((a, p) => a + (p.lag ?? 0), 0) : null;
        projector.push({ group: groupId, topic, lag, partitions, ...(topicError ? { topicError } : {}) });
      }
      let freshness: StatusReport['freshness'] = null;
      if (liveSchema) {
        // Freshness against the log the live projection folds (after a reindex, the new one), read
        // from the projection itself; KAFKA_TOPIC only while it has folded none.
        const folded = (await liveSources(pool, env.VIEWS_SCHEMA, liveSchema)).vault?.topic;
        const topic = folded ?? env.KAFKA_TOPIC;
        let high: Map<number, bigint> | null = null;
        if (admin) {
          try {
            high = new Map((await admin.offsets(topic)).map((o) => [o.partition, BigInt(o.high)]));
          } catch {
            // The topic's error is in the projector section already (or the topic is not there).
          }
        }
        const f = await projectionFreshness(pool, liveSchema, {
          topic,
          high,
          indexerSchema,
        }).catch(() => null);
        freshness = f && { records: f.records, blocks: f.blocks, seconds: f.seconds, chainId: f.chainId };
      }

      const webhooksSchema = env.WEBHOOKS_SCHEMA ?? env.PROJECTION_SCHEMA;
      const secrets = await webhookSecretsStatus(pool, webhooksSchema);
      const report: StatusReport = {
        viewsSchema: env.VIEWS_SCHEMA,
        liveSchema,
        ...(liveProblem ? { liveProblem } : {}),
        switchedAt: live?.switchedAt.toISOString() ?? null,
        fold: { projection: await projectionFoldVersion(pool, readSchema), build: FOLD_VERSION },
        chain,
        indexer: {
          schema: indexerSchema,
          chainHead,
          rpcChainId,
          ...(chainError ? { chainError } : {}),
          checkpoints,
        },
        projector,
        freshness,
        deadLetters: await deadLetterCounts(pool, readSchema),
        stalePrices: ofChain(await stalePriceRows(pool, readSchema)),
        held: ofChain(await heldVaultRows(pool, readSchema)),
        deadLetterList: await listDeadLetters(pool, readSchema, 20),
        builds: (await listBuilds(pool, env.VIEWS_SCHEMA)).map((b: BuildRecord) => ({
          schema: b.schema,
          purpose: b.purpose,
          state: b.state,
          group: b.groupId,
          topic: b.topic,
        })),
        ...(secrets
          ? {
              webhookSecrets: secrets.readable
                ? {
                    schema: webhooksSchema,
                    plaintext: secrets.plaintext,
                    sealed: secrets.sealed,
                    table: secrets.table,
                  }
                : {
                    schema: webhooksSchema,
                    plaintext: null,
                    sealed: null,
                    role: secrets.role,
                    table: secrets.table,
                  },
            }
          : {}),
      };
      if (values.json) console.log(JSON.stringify(report, null, 2));
      else console.log(formatStatus(report, !!env.KAFKA_BROKERS, !!env.RPC_URL));
      return 0;
    } finally {
      await admin?.close().catch(() => {});
      await pool.end();
    }
  },
};

export function formatStatus(r: StatusReport, kafka: boolean, rpc: boolean): string {
  const out: string[] = [];
  if (r.liveSchema === null) out.push(`live schema   none: ${r.liveProblem ?? 'unknown'}`);
  else
    out.push(
      `live schema   ${r.liveSchema}${r.switchedAt ? ` (views ${r.viewsSchema}, switched ${r.switchedAt})` : ` (views ${r.viewsSchema} never switched)`}`,
    );
  const { projection, build } = r.fold;
  out.push(
    projection === build
      ? `fold          version ${build} (this build's)`
      : `fold          version ${projection ?? '(not recorded: migrate)'}; this build folds version ${build}: run \`vault-yield rebuild\` — the figures of vaults with several records in one block differ`,
  );
  const { chainHead, rpcChainId } = r.indexer;
  /** RPC_URL's head, for the checkpoint of `chainId` (null: any): only its node's chain has it. */
  const head = (chainId: number | null) =>
    chainHead !== null && rpcChainId !== null
      ? chainId === null || chainId === rpcChainId
        ? `chain head ${chainHead}${chainId === null ? ` (chain ${rpcChainId})` : ''}`
        : `chain head unknown (RPC_URL is a node of chain ${rpcChainId})`
      : rpc
        ? `chain head unknown (${r.indexer.chainError ?? 'no answer'})`
        : 'chain head: RPC_URL not set';
  if (r.indexer.checkpoints.length === 0)
    out.push(
      `indexer       no checkpoint${r.chain === null ? '' : ` of chain ${r.chain}`} in ${r.indexer.schema}; ${head(null)}`,
    );
  for (const c of r.indexer.checkpoints) {
    out.push(
      `indexer       chain ${c.chainId}: block ${c.blockNumber} (${c.blockHash.slice(0, 10)}…, ${c.updatedAt}) of topic ${c.topic ?? '(not recorded: written before migration 0008)'}; ${head(c.chainId)}${c.behind !== null ? `, ${c.behind} blocks behind` : ''}`,
    );
  }
  if (r.projector.length === 0) out.push(`projector     no offsets stored in ${r.liveSchema}`);
  for (const p of r.projector) {
    out.push(
      `projector     group ${p.group} on ${p.topic}: ${p.lag === null ? (kafka ? `lag unknown (${p.topicError})` : 'lag unknown (KAFKA_BROKERS not set)') : `lag ${p.lag}`}`,
    );
    for (const q of p.partitions) {
      out.push(
        `                partition ${String(q.partition).padStart(3)}  stored ${String(q.stored ?? '-').padStart(10)}  high ${String(q.high ?? '-').padStart(10)}  lag ${q.lag ?? '-'}`,
      );
    }
  }
  const f = r.freshness;
  if (f)
    out.push(
      `freshness     ${f.records === null ? 'records behind unknown (KAFKA_BROKERS not set)' : `${f.records} records behind the log`}; ${f.blocks === null ? 'blocks behind unknown (no readable indexer checkpoint)' : `${f.blocks} blocks`}${f.seconds === null ? '' : `, ${f.seconds} s`} behind the indexer's checkpoint${f.chainId === null ? '' : ` (chain ${f.chainId}, the furthest behind)`}`,
    );
  const dl = r.deadLetters.reduce((a, d) => a + d.count, 0);
  out.push(
    `dead letters  ${dl}${r.deadLetters.length ? ` (${r.deadLetters.map((d) => `${d.topic}: ${d.count}`).join(', ')})` : ''}`,
  );
  for (const l of r.deadLetterList ?? [])
    out.push(
      `              #${l.id} ${l.topic}:${l.partition}:${l.offset} ${letterVault(l)} ${l.kind ?? '-'}: ${l.reason}`,
    );
  if (dl > 0) out.push('              (`vault-yield dead-letters list`; `retry` after a fix)');
  const ofChain = r.chain === null ? '' : ` (chain ${r.chain})`;
  out.push(`held vaults   ${r.held.length === 0 ? 'none' : r.held.length}${ofChain}`);
  for (const h of r.held) {
    const id = vaultId(h.chainId, h.vault);
    out.push(
      `              vault ${id}: folded to seq ${h.lastSeq ?? '-'}, missing ${h.missingFrom ?? '?'}..${h.missingTo ?? '?'}, ${h.held} held; ` +
        `vault-yield republish --vault ${id} --from-block ${h.fromBlock ?? '?'} --to-block ${h.toBlock ?? '?'} (with chain ${h.chainId}'s RPC_URL)`,
    );
  }
  out.push(`stale prices  ${r.stalePrices.length === 0 ? 'none' : r.stalePrices.length}${ofChain}`);
  for (const p of r.stalePrices) {
    out.push(
      `              vault ${vaultId(p.chainId, p.vault)} ${p.symbol} (${p.token}) feed ${p.feed}: ${p.ageSeconds} s old, heartbeat ${p.heartbeatSeconds} s`,
    );
  }
  const ws = r.webhookSecrets;
  if (ws)
    out.push(
      ws.plaintext === null
        ? `webhooks      cannot tell how many signing secrets are plaintext: role ${ws.role ?? '?'} may not read ${ws.schema}.${ws.table} (run status as the migrator or ${WEBHOOKS_ROLE})`
        : ws.table === 'webhook_endpoints'
          ? `webhooks      ${ws.plaintext} signing secret${ws.plaintext === 1 ? '' : 's'} stored in plaintext in ${ws.schema}.webhook_endpoints, readable by every role granted the table: run \`vault-yield migrate\` (0025 moves them to a table only the migrator and ${WEBHOOKS_ROLE} may read), then \`vault-yield webhooks rekey\` with WEBHOOK_SECRET_KEY to seal them`
          : ws.plaintext > 0
            ? `webhooks      ${ws.plaintext} signing secret${ws.plaintext === 1 ? '' : 's'} stored in plaintext (of ${ws.plaintext + (ws.sealed ?? 0)}): run \`vault-yield webhooks rekey\` with WEBHOOK_SECRET_KEY to seal ${ws.plaintext === 1 ? 'it' : 'them'} (the deliverer also seals them when it starts)`
            : `webhooks      no signing secret in plaintext (${ws.sealed ?? 0} sealed)`,
    );
  if (r.builds.length) {
    out.push('builds');
    for (const b of r.builds)
      out.push(`              ${b.schema} ${b.purpose} ${b.state}${b.group ? ` group ${b.group}` : ''}`);
  }
  return out.join('\n');
}
