import { CONFIG_DEFAULTS, type Context, createLogger } from '@vault-yield/common';
import {
  createPgPool,
  type LiveSwitchWatch,
  liveLog,
  schemaExists,
  watchLiveSwitch,
} from '@vault-yield/store';
import type { IndexerConfig } from './config.js';
import { createIndexer, type Indexer, type IndexerStatus } from './index.js';

/** How an indexer follows the live log of a views schema (`FOLLOW_LIVE`). */
export interface IndexerFollowOptions {
  /** The views schema whose live build names the log to publish (`vy_live`, `vy_builds`). */
  viewsSchema: string;
  /** How often the live build is read besides the switch's notification (LISTEN `vault_yield_live`). */
  intervalMs: number;
}

/** An indexer that moves to the live log: the `Indexer` of the log it publishes now, and where. */
export interface FollowingIndexer extends Indexer {
  /** The topic published now. */
  topic(): string;
  /** The schema of the checkpoint written now. */
  schema(): string;
}

/** Where the indexer publishes and checkpoints. */
interface LogTarget {
  topic: string;
  schema: string;
}

/**
 * Runs the indexer of `config` on the log the live projection of `follow.viewsSchema` folds and
 * moves it when a reindex is switched live: `reindex --topic NEW` cuts NEW from the chain with a
 * checkpoint namespace of its own up to the head it saw, and its build records that namespace
 * (`vy_builds.indexer_schema`). Once that build is live (its topic differs from the one published),
 * the running indexer stops (the step in flight commits) and a new one starts on NEW and the
 * namespace's checkpoint: it resumes where the reindex stopped, so blocks mined meanwhile are
 * published to NEW, and the old log simply ends. The checkpoint is NEW's (the indexer refuses
 * one of another topic). It follows whatever is live, back as well as forward: switched back to
 * a schema of an earlier log — the one the views were bootstrapped on, which has no build and
 * folds `config`'s topic, or a reindex's — it publishes that log again from its namespace's
 * checkpoint, where it left it (the blocks mined since go there, none twice), since the following
 * projectors fold it there; a log it stayed on would never be served again. A build that is not
 * live is never followed. The switch is learnt from its notification (a session-mode connection
 * only) and from the bookkeeping every `intervalMs`. Before any reindex, `config`'s topic and
 * schema are used.
 */
export function followLiveIndexer(
  config: IndexerConfig,
  follow: IndexerFollowOptions,
  ctx?: Context,
): FollowingIndexer {
  const logger = ctx?.log ?? config.logger ?? createLogger({ name: 'indexer' });
  const log = logger.child({ component: 'follow-live' });
  const pool = createPgPool({
    url: config.databaseUrl,
    applicationName: 'vault-yield-follow',
    max: 1,
    pooling: config.pooling,
  });
  /** The log published before any reindex, and by a live schema without a log of its own. */
  const configured: LogTarget = {
    topic: config.kafka.topic ?? CONFIG_DEFAULTS.recordsTopic,
    schema: config.schema ?? CONFIG_DEFAULTS.projectionSchema,
  };
  let at: LogTarget = configured;
  let current: Indexer | null = null;
  let running = false;
  let stopped = false;
  let chain: Promise<void> = Promise.resolve();
  let watch: LiveSwitchWatch | null = null;
  let resolveDone!: () => void;
  let rejectDone!: (err: unknown) => void;
  const done = new Promise<void>((res, rej) => {
    resolveDone = res;
    rejectDone = rej;
  });
  done.catch(() => {});

  /** What the follower last warned of (said once, not at every look). */
  let warned = '';
  const warnOnce = (what: string, say: () => void) => {
    if (what !== warned) say();
    warned = what;
  };
  /** The live log when it is another than the one published (and one that may be moved to). */
  const moveTo = async (): Promise<LogTarget | null> => {
    const live = await liveLog(pool, follow.viewsSchema);
    if (!live) return null;
    let t: LogTarget;
    if (live.topic && live.indexerSchema) t = { topic: live.topic, schema: live.indexerSchema };
    // The schema the views were bootstrapped on (no build), or a rebuild of the configured topic:
    // the projectors fold the configured log there.
    else if (!live.topic || live.topic === configured.topic) t = configured;
    else {
      warnOnce(`${live.schema} ${live.topic}`, () =>
        log.warn(
          { schema: live.schema, topic: live.topic },
          'the live build names no checkpoint namespace for its topic; staying',
        ),
      );
      return null;
    }
    if (t.topic === at.topic && t.schema === at.schema) return null;
    if (!(await schemaExists(pool, t.schema))) {
      warnOnce(`${t.topic} ${t.schema}`, () =>
        log.warn(
          { topic: t.topic, namespace: t.schema },
          'the live build names a checkpoint namespace that does not exist; staying',
        ),
      );
      return null;
    }
    warned = '';
    return t;
  };

  /** Starts an indexer on `t`; its halt (not its stop for a move) ends the follower. */
  const launch = async (t: LogTarget): Promise<void> => {
    const next = createIndexer(
      {
        ...config,
        logger,
        kafka: { ...config.kafka, topic: t.topic },
        schema: t.schema,
      },
      ctx,
    );
    current = next;
    await next.start();
    running = true;
    next.done.then(
      () => {
        if (next === current && next.status().ended) resolveDone();
      },
      (err: unknown) => {
        if (next === current) rejectDone(err);
      },
    );
  };

  /** Moves to the live log if it changed (serialised: one look at a time). */
  const check = (): Promise<void> => {
    chain = chain.then(async () => {
      if (stopped || !running) return;
      let t: LogTarget | null;
      try {
        t = await moveTo();
      } catch (err) {
        log.warn({ err }, 'cannot read the live build; staying on the current log');
        return;
      }
      if (!t || stopped) return;
      log.info({ from: at, to: t }, 'the live projection folds another log: moving the indexer to it');
      running = false;
      await current?.stop();
      at = t;
      for (let attempt = 1; !stopped; attempt++) {
        try {
          await launch(t);
          log.info({ ...t, checkpoint: started().status().checkpoint }, 'indexer follows the live log');
          return;
        } catch (err) {
          await current?.stop().catch(() => {});
          log.error({ err, ...t, attempt }, 'indexer failed to start on the live log; retrying');
          await new Promise((r) => setTimeout(r, Math.min(30_000, follow.intervalMs * attempt)));
        }
      }
    });
    return chain;
  };

  const started = (): Indexer => {
    if (!current) throw new Error('the following indexer has not started');
    return current;
  };

  const listen = () => {
    // LISTEN holds a session: through a transaction-mode pooler the interval alone tells.
    watch = watchLiveSwitch({
      url: config.databaseUrl,
      viewsSchema: follow.viewsSchema,
      intervalMs: follow.intervalMs,
      listen: config.pooling !== 'transaction',
      check: () => void check(),
      onListenError: (err, retryInMs) =>
        log.warn({ err, retryInMs }, 'live-switch listener lost; polling meanwhile'),
    });
  };

  return {
    get metrics() {
      return started().metrics;
    },
    done,
    topic: () => at.topic,
    schema: () => at.schema,
    async start() {
      // A restart after a reindex goes straight to the live log.
      const t = await moveTo().catch((err: unknown) => {
        log.warn({ err }, 'cannot read the live build; starting on the configured log');
        return null;
      });
      if (t) {
        log.info(
          { configured: at, live: t },
          'the live projection folds another log: the indexer starts on it',
        );
        at = t;
      }
      await launch(at);
      log.info({ viewsSchema: follow.viewsSchema, ...at }, 'indexer follows the live log');
      if (!stopped) listen();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await watch?.stop();
      await chain;
      await current?.stop();
      await pool.end();
      resolveDone();
    },
    /** The indexer running now's (a move in the meantime leaves it waiting: look again). */
    waitFor: (blockNumber) => started().waitFor(blockNumber),
    status: (): IndexerStatus => started().status(),
  };
}
