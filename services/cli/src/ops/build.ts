import { randomBytes } from 'node:crypto';
import type { Context, Logger } from '@vault-yield/common';
import { createLogAdmin, type LogAdmin } from '@vault-yield/log';
import { startProjections } from '@vault-yield/projector';
import {
  type BuildPurpose,
  type BuildRecord,
  createPgPool,
  type FinalizeReport,
  finalizeBuildSchema,
  getBuild,
  markBuild,
  type Pool,
  prepareBuildSchema,
  recordBuild,
  storedOffsetRows,
} from '@vault-yield/store';
import type { OpsEnv } from '../config.js';
import { ddlUrl, usageError } from './env.js';
import { createProgress } from './progress.js';
import { refreshStrategyStats, strategyGroups } from './strategy.js';

export interface BuildSpec {
  env: OpsEnv;
  /** The command's context: the brokers of `env` with their SASL/TLS and connect budget, its registry. */
  ctx: Context;
  schema: string;
  groupId: string;
  topic: string;
  purpose: BuildPurpose;
  /** A reindex's checkpoint namespace, recorded with the build (BuildRecord.indexerSchema). */
  indexerSchema?: string;
  /** Fold the strategy topics too, when they exist (decided once, recorded with the build). */
  strategy: boolean;
  /** Unlogged tables while folding (SET LOGGED at finalize). */
  unlogged: boolean;
  /** Secondary indexes dropped while folding (built at finalize). */
  deferIndexes: boolean;
  /** Build the deferred indexes and SET LOGGED once caught up (needed before serving). */
  finalize: boolean;
  log: Logger;
  /** No progress output (verify's scratch fold still prints its summary). */
  quiet?: boolean;
  label?: string;
}

export interface BuildHandle {
  record: BuildRecord;
  resumed: boolean;
  finalized: FinalizeReport | null;
  /** Records of the main topic applied by the build (sum of its stored offsets). */
  applied: number;
  foldSeconds: number;
  /** Pool on the build schema (search_path), for the caller's reads. */
  schemaPool: Pool;
  /** Admin pool (no search_path). */
  pool: Pool;
  /** Keeps folding new records into the schema until stop(). */
  stop(): Promise<void>;
  /** Waits until the build has applied everything the topics hold now. */
  catchUp(): Promise<void>;
}

interface BuildProjections {
  stop(): Promise<void>;
}

async function topicExists(admin: LogAdmin, topic: string): Promise<boolean> {
  // kafkajs retries metadata of a missing topic for a long time: look at the list first.
  if (!(await admin.listTopics()).includes(topic)) return false;
  try {
    const offsets = await admin.offsets(topic);
    return offsets.length > 0;
  } catch {
    return false;
  }
}

/**
 * Folds the whole log into `spec.schema` from offset 0 with its own consumer group, next to the
 * live projector: the build is recorded first, the schema migrated and (with `fast`) made
 * unlogged without secondary indexes; the vault topic and the strategy topics are folded until the
 * stored offsets reach the high watermarks; then (with `finalize`) the consumers pause while the
 * indexes are built and the tables logged, and the tail that arrived meanwhile is folded. Running
 * it again with the same schema resumes from the offsets stored in it.
 */
export async function runBuild(spec: BuildSpec): Promise<BuildHandle> {
  const { env, log } = spec;
  const views = env.VIEWS_SCHEMA;
  // The build creates and owns its schema: the migrator's URL (MIGRATE_DATABASE_URL) throughout.
  const url = ddlUrl(env);
  const pool = createPgPool({ url, applicationName: 'vault-yield-build', max: 3 });
  const schemaPool = createPgPool({
    url,
    schema: spec.schema,
    applicationName: 'vault-yield-build',
    max: 2,
  });
  const admin = await createLogAdmin({ ...spec.ctx.kafka!, clientId: 'vault-yield-build-admin' });
  let projections: BuildProjections | null = null;
  const cleanup = async () => {
    if (projections) await projections.stop().catch(() => {});
    projections = null;
    await admin.close().catch(() => {});
    await schemaPool.end().catch(() => {});
    await pool.end().catch(() => {});
  };
  try {
    if (!(await topicExists(admin, spec.topic))) throw usageError(`topic ${spec.topic} does not exist`);
    const existing = await getBuild(pool, views, spec.schema);
    if (existing) {
      if (existing.groupId !== spec.groupId || existing.topic !== spec.topic) {
        throw usageError(
          `schema ${spec.schema} was built by group ${existing.groupId} from ${existing.topic}; resume it with --group ${existing.groupId}`,
        );
      }
      if (existing.state === 'live' || existing.state === 'dropped' || existing.state === 'retired') {
        throw usageError(`schema ${spec.schema} is ${existing.state}: pick a new schema name`);
      }
    }
    const market =
      existing?.market ??
      (spec.strategy &&
      (await topicExists(admin, env.SCREEN_TOPIC)) &&
      (await topicExists(admin, env.CATALOGUE_TOPIC))
        ? { screenTopic: env.SCREEN_TOPIC, catalogueTopic: env.CATALOGUE_TOPIC }
        : null);
    await recordBuild(pool, views, {
      schema: spec.schema,
      purpose: spec.purpose,
      indexerSchema: spec.indexerSchema,
      groupId: spec.groupId,
      topic: spec.topic,
      market,
    });
    log.info({ schema: spec.schema, group: spec.groupId, resumed: !!existing }, 'build started');
    await prepareBuildSchema(pool, {
      viewsSchema: views,
      schema: spec.schema,
      readerRole: env.READER_ROLE,
      writerRole: env.WRITER_ROLE,
      unlogged: spec.unlogged,
      deferIndexes: spec.deferIndexes,
    });

    // Every topic the build folds, with the group its offsets are stored under.
    const sources = [{ topic: spec.topic, group: spec.groupId }];
    if (market) {
      const g = strategyGroups(spec.groupId);
      sources.push(
        { topic: market.screenTopic, group: g.screen },
        { topic: market.catalogueTopic, group: g.catalogue },
      );
    }

    /**
     * `durable: false` only for the first pass of a build not yet finalized: nothing serves the
     * schema then, a commit lost to a crash is folded again from the offsets that survived, and
     * finalizing (or the switch) commits — flushing the WAL — before anything reads it. Projections that
     * may still run once the schema is live (`rebuild --follow`) commit durably.
     */
    const startBuildProjections = async (durable: boolean): Promise<BuildProjections> => {
      const run = randomBytes(3).toString('hex');
      const running = startProjections(
        {
          kafka: {
            brokers: env.KAFKA_BROKERS,
            topic: spec.topic,
            consumerGroup: spec.groupId,
            // A Kafka group of its own per run: a resumed build never waits for a killed run's
            // session to expire; the offsets that matter are the ones stored in the schema.
            groupId: `${spec.groupId}.${run}`,
            clientId: 'vault-yield-build',
            sessionTimeoutMs: 30_000,
          },
          databaseUrl: url,
          schema: spec.schema,
          migrate: false,
          synchronousCommit: durable ? 'on' : 'off',
          concurrency: env.PROJECTOR_CONCURRENCY,
          pgPoolMax: env.PG_POOL_MAX,
          maxBatchBytes: env.PROJECTOR_MAX_BATCH_BYTES,
          logger: log,
          // The strategy topics into the build schema too, under a Kafka group of their own per run
          // as well; strategy figures are refreshed by the build once the fold is done, not on a timer.
          strategy: market
            ? {
                screenTopic: market.screenTopic,
                catalogueTopic: market.catalogueTopic,
                groupId: spec.groupId,
                statsIntervalMs: 0,
                minDailyReturns: env.MIN_DAILY_RETURNS,
                pool: schemaPool,
                kafkaGroupSuffix: run,
                sessionTimeoutMs: 30_000,
              }
            : null,
        },
        // The command's context, its lines the build's (a reindex's rebuild: a component).
        { ...spec.ctx, log },
      );
      try {
        await running.started;
      } catch (err) {
        await running.stop().catch(() => {});
        throw err;
      }
      return { stop: () => running.stop() };
    };

    /** Applied vs available, main topic; caught up when every source's partitions are. */
    const position = async () => {
      let caughtUp = true;
      let done = 0;
      let total = 0;
      for (const s of sources) {
        const high = await admin.offsets(s.topic);
        const stored = new Map(
          (await storedOffsetRows(pool, spec.schema, { groupId: s.group, topic: s.topic })).map((r) => [
            r.partition,
            BigInt(r.nextOffset) < 0n ? 0n : BigInt(r.nextOffset),
          ]),
        );
        for (const h of high) {
          const at = stored.get(h.partition) ?? 0n;
          if (at < BigInt(h.high)) caughtUp = false;
          if (s.topic === spec.topic && s.group === spec.groupId) {
            done += Number(at);
            total += Number(h.high);
          }
        }
      }
      return { done, total, caughtUp };
    };

    const label = spec.label ?? `${spec.purpose} ${spec.schema}`;
    const foldToHead = async (quiet: boolean) => {
      const progress = createProgress(label, process.stderr, { quiet });
      for (;;) {
        const p = await position();
        progress.update(p.done, p.total);
        if (p.caughtUp) {
          if (!quiet) progress.finish(`caught up at ${p.total.toLocaleString('en-US')} records`);
          return p.done;
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    };

    const t0 = performance.now();
    const before = (await getBuild(pool, views, spec.schema)) as BuildRecord;
    const finalizing = spec.finalize && (before.unlogged || before.deferredIndexes.length > 0);
    projections = await startBuildProjections(!finalizing);
    let applied = await foldToHead(spec.quiet ?? false);
    const foldSeconds = (performance.now() - t0) / 1000;
    let finalized: FinalizeReport | null = null;
    if (finalizing) {
      await projections.stop();
      projections = null;
      finalized = await finalizeBuildSchema(pool, views, spec.schema);
      if (!spec.quiet) {
        process.stderr.write(
          `${label}: built ${finalized.indexes.length} indexes, logged ${finalized.loggedTables.length} tables in ${finalized.seconds.toFixed(1)} s\n`,
        );
      }
      projections = await startBuildProjections(true);
      applied = await foldToHead(true);
    }
    if (market) await refreshStrategyStats(schemaPool, env.MIN_DAILY_RETURNS, log);
    await markBuild(pool, views, spec.schema, {
      caughtUp: true,
      state: spec.finalize ? 'ready' : undefined,
    });
    return {
      record: (await getBuild(pool, views, spec.schema)) as BuildRecord,
      resumed: !!existing,
      finalized,
      applied,
      foldSeconds,
      schemaPool,
      pool,
      stop: cleanup,
      catchUp: async () => {
        await foldToHead(true);
      },
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
