import { parseArgs } from 'node:util';
import { redactText, securityOf } from '@vault-yield/common';
import { parseVaultId, vaultId } from '@vault-yield/domain';
import { createPgPool, indexerCheckpoints } from '@vault-yield/store';
import { z } from 'zod';
import type { Command } from '../command.js';
import { republishEnvSchema } from '../config.js';
import { failure, optionValue, usageError } from '../ops/env.js';
import { namedTopics } from '../ops/live-topics.js';

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x-prefixed 20-byte address');
const block = z.coerce.number().int().nonnegative();
const chain = z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

export const republishCommand: Command<typeof republishEnvSchema> = {
  env: republishEnvSchema,
  log: { name: 'republish' },
  help: `usage: vault-yield republish --vault VAULT [--chain N] --from-block N [--to-block M] [--dry-run] [--json]

Publishes a vault's records of blocks N..M (default M: the indexer's checkpoint) to the log again,
re-derived from the chain exactly as the indexer derived them: the same decoding and record
construction, the sequence numbers they were published with (indexer_vault_seqs; below the reorg
window their compacted spans, recounted from the chain), contexts read at their blocks. A vault the projector holds behind a gap in its numbers (\`vault-yield status\`
prints the command, with the blocks) then folds the missing records and those it held; records
the log already holds are duplicates the projector skips.

Refused (exit 1, one line): a vault the indexer does not know; a --from-block above the indexer's
checkpoint (nothing published there to re-derive); a block reorganised since it was published
(its records are void); a block (or a compacted span) whose events no longer match its numbers. Revert records are not
re-derivable (their orphaned blocks are gone): their numbers are reported, not published.

A vault is its chain and address: RPC_URL is one chain's node, so a vault of another chain is
refused (exit 2, nothing published): run republish with that chain's RPC_URL and CHAIN_ID.

options:
  --vault VAULT      the vault (required): its id eip155:CHAIN:0x… (as \`vault-yield status\`
                     prints a held vault), or its address on the chain of --chain, else CHAIN_ID,
                     else RPC_URL's node
  --chain N          the vault's chain (with a bare --vault address); must be CHAIN_ID's when it
                     is set, and RPC_URL's node's
  --from-block N     first block (required; the held vault's \`behind.gap.fromBlock\`)
  --to-block M       last block (default: the indexer's checkpoint)
  --dry-run          re-derive and report; publish nothing
  --json             the result as JSON on stdout

environment:
  DATABASE_URL, KAFKA_BROKERS, RPC_URL, FACTORY_ADDRESS (required); KAFKA_TOPIC (the topic of the indexer's checkpoint, else vault-records; another is refused);
  CHAIN_ID; FEED_HEARTBEAT_SECONDS, FEED_HEARTBEATS, VALUATION_LENS (the indexer's); INDEXER_SCHEMA (default
  PROJECTION_SCHEMA); KAFKA_SASL_*, KAFKA_SSL*`,
  async run(argv, context) {
    const { values } = parseArgs({
      args: argv,
      options: {
        vault: { type: 'string' },
        chain: { type: 'string' },
        'from-block': { type: 'string' },
        'to-block': { type: 'string' },
        'dry-run': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
      },
    });
    if (!values.vault) throw usageError('--vault is required');
    if (values['from-block'] === undefined) throw usageError('--from-block is required');
    const named = parseVaultId(values.vault);
    const vault = (named?.vault ?? optionValue('vault', address, values.vault)) as `0x${string}`;
    const chainOption = values.chain === undefined ? undefined : optionValue('chain', chain, values.chain);
    if (named && chainOption !== undefined && chainOption !== named.chainId)
      throw usageError(`--vault ${values.vault} is on chain ${named.chainId}, but --chain is ${chainOption}`);
    /** The vault's chain when the command names it (its id, --chain); else CHAIN_ID's, else the node's. */
    const wanted = named?.chainId ?? chainOption;
    const fromBlock = optionValue('from-block', block, values['from-block']);
    const toBlock =
      values['to-block'] === undefined ? undefined : optionValue('to-block', block, values['to-block']);
    if (toBlock !== undefined && toBlock < fromBlock) throw usageError('--to-block is below --from-block');
    const ctx = context();
    const { config: env, log: logger } = ctx;
    if (wanted !== undefined) {
      // RPC_URL is one chain's node: a vault of another chain is re-derived from its own node.
      if (env.CHAIN_ID !== undefined && env.CHAIN_ID !== wanted)
        throw usageError(
          `${vaultId(wanted, vault)} is on chain ${wanted}, but CHAIN_ID is ${env.CHAIN_ID} (RPC_URL is its node): run republish with chain ${wanted}'s RPC_URL and CHAIN_ID (republish refused, nothing published)`,
        );
      if (env.CHAIN_ID === undefined) {
        const { createChainClient, getChainIdFromNode } = await import('@vault-yield/chain');
        const nodeChain = await getChainIdFromNode(
          createChainClient({ rpcUrl: env.RPC_URL, cacheTime: 0, retryCount: 1, timeoutMs: 10_000 }),
        );
        if (nodeChain !== wanted)
          throw usageError(
            `${vaultId(wanted, vault)} is on chain ${wanted}, but RPC_URL (${nodeOf(env.RPC_URL)}) is a node of chain ${nodeChain}: run republish with chain ${wanted}'s RPC_URL (republish refused, nothing published)`,
          );
      }
    }
    const chainId = wanted ?? env.CHAIN_ID;
    const schema = env.INDEXER_SCHEMA ?? env.PROJECTION_SCHEMA;
    const found = await indexerCheckpoint(env.DATABASE_URL, schema, chainId);
    const checkpoint = found?.blockNumber ?? null;
    // The records go where the indexer publishes: the topic its checkpoint is of. KAFKA_TOPIC
    // naming another (an environment left from before a reindex) is refused, not obeyed.
    const namedTopic = namedTopics(ctx).vault;
    if (found?.topic && namedTopic !== undefined && namedTopic !== found.topic)
      throw usageError(
        `KAFKA_TOPIC=${namedTopic}, but the indexer of ${schema} publishes to ${found.topic}: unset KAFKA_TOPIC or set it to ${found.topic} (republish refused, nothing published)`,
      );
    const topic = found?.topic ?? env.KAFKA_TOPIC;
    if (checkpoint !== null && fromBlock > checkpoint)
      throw failure(
        `nothing to re-derive: --from-block ${fromBlock} is above the indexer's checkpoint ${checkpoint} (in ${schema}), ` +
          "so no record of those blocks was published yet; check --from-block (`vault-yield status` prints a held vault's blocks)",
      );
    const { republishVault, RepublishError } = await import('@vault-yield/indexer');
    const result = await republishVault({
      rpcUrl: env.RPC_URL,
      chainId,
      factory: env.FACTORY_ADDRESS as `0x${string}`,
      databaseUrl: env.DATABASE_URL,
      schema,
      kafka: {
        brokers: env.KAFKA_BROKERS,
        topic,
        security: securityOf(ctx.kafka),
        connectBudgetMs: ctx.kafka?.connectBudgetMs ?? null,
        encoding: env.RECORD_ENCODING,
      },
      heartbeats: {
        default: env.FEED_HEARTBEAT_SECONDS ?? 3600,
        byFeed: Object.fromEntries(
          Object.entries(env.FEED_HEARTBEATS ?? {}).map(([f, s]) => [f.toLowerCase(), s]),
        ),
      },
      valuationLens: env.VALUATION_LENS,
      vault,
      fromBlock,
      toBlock,
      dryRun: values['dry-run'],
      logger,
    }).catch((err: unknown) => {
      if (err instanceof RepublishError && /is unknown to the indexer/.test(err.message))
        throw failure(
          `${err.message}: check --vault, and that INDEXER_SCHEMA (default PROJECTION_SCHEMA) names the live indexer's schema`,
        );
      throw err;
    });
    if (values.json) console.log(JSON.stringify(result, null, 2));
    else {
      const done = values['dry-run']
        ? 're-derived (dry run)'
        : result.published
          ? 'republished'
          : 'nothing to republish:';
      console.log(
        `${done} ${result.records} records of ${chainId === undefined ? result.vault : vaultId(chainId, result.vault)}, ` +
          `blocks ${result.fromBlock}..${result.toBlock}, seq ${result.firstSeq ?? '-'}..${result.lastSeq ?? '-'}`,
      );
      for (const [a, b] of result.notRederived)
        console.log(`not re-derivable (revert records): seq ${a}..${b}`);
    }
    return 0;
  },
};

/** An RPC URL as scheme://host:port only (a provider's key in its path or query never shown). */
function nodeOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return redactText(url);
  }
}

/**
 * The block the indexer has published up to in `schema` (of CHAIN_ID, or of its one chain), or
 * null when that is not known (no checkpoint yet, several chains and no CHAIN_ID).
 */
async function indexerCheckpoint(
  url: string,
  schema: string,
  chainId: number | undefined,
): Promise<{ blockNumber: number; topic: string | null } | null> {
  const pool = createPgPool({ url, schema, applicationName: 'republish', max: 1 });
  try {
    const rows = await indexerCheckpoints(pool, schema);
    const row =
      chainId === undefined
        ? rows.length === 1
          ? rows[0]
          : undefined
        : rows.find((r) => r.chainId === chainId);
    return row ? { blockNumber: row.blockNumber, topic: row.topic } : null;
  } finally {
    await pool.end();
  }
}
