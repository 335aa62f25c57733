import { type IndexerCheckpointRow, indexerCheckpoints, liveLog, type Pool } from '@vault-yield/store';
import { z } from 'zod';
import { cliEnvSchema } from '../config.js';
import type { CliContext } from '../context.js';
import { usageError } from './env.js';

type Queryable = Pick<Pool, 'query'>;

/** INDEXER_SCHEMA alone: the live indexer's schema before any reindex (default PROJECTION_SCHEMA). */
const indexerSchemaEnv = z.object({ INDEXER_SCHEMA: cliEnvSchema.shape.INDEXER_SCHEMA });

/** One chain the live deployment follows, against the new log's checkpoint namespace. */
export interface ChainCut {
  chainId: number;
  /** The live indexer's checkpoint of this chain. */
  live: number;
  /** The namespace's checkpoint of this chain (how far it was cut into the new topic); null: not cut. */
  cut: number | null;
}

/**
 * The schema holding the checkpoints of the indexers that publish the live log — the namespace
 * of the reindex that cut the live topic (what FOLLOW_LIVE indexers publish from), else
 * INDEXER_SCHEMA, else PROJECTION_SCHEMA (the indexers' defaults before any reindex) — and the
 * live topic when a build names it.
 */
export async function liveIndexer(
  db: Queryable,
  ctx: Pick<CliContext<unknown>, 'read'>,
  viewsSchema: string,
  projectionSchema: string,
): Promise<{ schema: string; topic: string | null }> {
  const live = await liveLog(db, viewsSchema);
  return {
    schema: live?.indexerSchema ?? ctx.read(indexerSchemaEnv).INDEXER_SCHEMA ?? projectionSchema,
    topic: live?.topic ?? null,
  };
}

/**
 * Every chain the live deployment follows — a checkpoint in the live indexer schema (of the live
 * topic, when that is known) — with how far the namespace cut it into the new log.
 */
export async function chainCuts(
  db: Queryable,
  liveSchema: string,
  liveTopic: string | null,
  namespace: string,
): Promise<ChainCut[]> {
  const ofLiveLog = (c: IndexerCheckpointRow) =>
    liveTopic === null || c.topic === null || c.topic === liveTopic;
  const live = (await indexerCheckpoints(db, liveSchema)).filter(ofLiveLog);
  const cut = new Map((await indexerCheckpoints(db, namespace)).map((c) => [c.chainId, c.blockNumber]));
  return live.map((c) => ({ chainId: c.chainId, live: c.blockNumber, cut: cut.get(c.chainId) ?? null }));
}

/**
 * A new log is served only once every chain the live deployment follows was cut into it: a chain
 * left out would drop out of the projection at the switch, and its FOLLOW_LIVE indexer would find
 * no checkpoint in the namespace (it would republish its whole history). Refused (exit 2, nothing
 * built) naming each chain missing and the command that cuts it; a chain cut to a block below its
 * live checkpoint is not refused (the chain moved on while it was cut: its indexer, moved to the
 * new log, publishes the blocks since from the namespace's checkpoint).
 */
export function requireEveryChainCut(cuts: readonly ChainCut[], topic: string, namespace: string): void {
  const missing = cuts.filter((c) => c.cut === null);
  if (missing.length === 0) return;
  const ids = missing.map((c) => c.chainId).join(', ');
  const run = missing
    .map(
      (c) =>
        `chain ${c.chainId} (live at block ${c.live}): RPC_URL=<its node> CHAIN_ID=${c.chainId} FACTORY_ADDRESS=<its factory> vault-yield reindex --topic ${topic} --namespace ${namespace} --no-rebuild`,
    )
    .join('; ');
  const done = cuts.filter((c) => c.cut !== null).map((c) => c.chainId);
  throw usageError(
    `${topic} is not cut for every chain the live deployment follows: chain${missing.length > 1 ? 's' : ''} ${ids} ` +
      `missing from namespace ${namespace}${done.length ? ` (cut: ${done.join(', ')})` : ''}; switching now would drop ` +
      `their vaults. Cut each, with its chain's environment (START_BLOCK, CONFIRMATIONS, … as its live indexer's): ${run}; ` +
      'then run this again (nothing was built or switched)',
  );
}

/** One line per chain: how far the new log holds it, against the live indexer. */
export function cutLines(cuts: readonly ChainCut[], topic: string): string[] {
  return cuts.map((c) =>
    c.cut === null
      ? `chain ${c.chainId}: not cut into ${topic} (live at block ${c.live})`
      : `chain ${c.chainId}: cut into ${topic} to block ${c.cut} (live at block ${c.live}${
          c.cut < c.live ? `, ${c.live - c.cut} blocks behind: its indexer publishes them once moved` : ''
        })`,
  );
}
