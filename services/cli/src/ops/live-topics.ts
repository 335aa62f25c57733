import { getBuild, type Pool, type StoredOffsetRow, storedOffsetRows } from '@vault-yield/store';
import { namedTopicsSchema } from '../config.js';
import type { CliContext } from '../context.js';
import { usageError } from './env.js';
import { strategyGroups } from './strategy.js';

type Queryable = Pick<Pool, 'query'>;

/** One topic a projection folds, with the group its offsets are stored under. */
export interface LiveSource {
  topic: string;
  group: string;
}

/** What a projection folds: the vault topic and the market side's two topics (null: none seen). */
export interface LiveSources {
  vault: LiveSource | null;
  screen: LiveSource | null;
  catalogue: LiveSource | null;
}

export type SourceKind = keyof LiveSources;

/** The variable that names each kind's topic. */
export const TOPIC_VARIABLE = {
  vault: 'KAFKA_TOPIC',
  screen: 'SCREEN_TOPIC',
  catalogue: 'CATALOGUE_TOPIC',
} as const satisfies Record<SourceKind, string>;

// The strategy projector stores its offsets under `<group>-screen` and `<group>-catalogue`.
const MARKET_SUFFIX = strategyGroups('');

const kindOfGroup = (group: string): SourceKind =>
  group.endsWith(MARKET_SUFFIX.screen)
    ? 'screen'
    : group.endsWith(MARKET_SUFFIX.catalogue)
      ? 'catalogue'
      : 'vault';

/** The most recently written (group, topic) of a kind among a schema's stored offsets. */
function latestOf(rows: StoredOffsetRow[], kind: SourceKind): LiveSource | null {
  let best: StoredOffsetRow | null = null;
  for (const r of rows) {
    if (kindOfGroup(r.groupId) !== kind) continue;
    if (!best || r.updatedAt.getTime() > best.updatedAt.getTime()) best = r;
  }
  return best ? { topic: best.topic, group: best.groupId } : null;
}

/**
 * The topics a projection schema folds, read from the projection itself: its build record in
 * the views schema where it names them (a rebuild's), else its stored offsets (consumer_offsets
 * names the group and topic of every partition a projector applied; the market side's groups end
 * in `-screen` / `-catalogue`), the last written of each kind.
 */
export async function liveSources(db: Queryable, viewsSchema: string, schema: string): Promise<LiveSources> {
  const build = await getBuild(db, viewsSchema, schema).catch((err: unknown) => {
    // A role not granted the build records (the writer before a switch granted it): offsets only.
    if ((err as { code?: string }).code === '42501') return null;
    throw err;
  });
  const rows = await storedOffsetRows(db, schema);
  const fromBuild = build?.topic && build.groupId ? build : null;
  const g = fromBuild ? strategyGroups(fromBuild.groupId) : null;
  const market = fromBuild?.market ?? null;
  return {
    vault: fromBuild ? { topic: fromBuild.topic, group: fromBuild.groupId } : latestOf(rows, 'vault'),
    screen: market && g ? { topic: market.screenTopic, group: g.screen } : latestOf(rows, 'screen'),
    catalogue:
      market && g ? { topic: market.catalogueTopic, group: g.catalogue } : latestOf(rows, 'catalogue'),
  };
}

/** The topic variables the environment sets (unset ones are absent: their defaults do not count). */
export function namedTopics(ctx: Pick<CliContext<unknown>, 'read'>): Partial<Record<SourceKind, string>> {
  const env = ctx.read(namedTopicsSchema);
  const out: Partial<Record<SourceKind, string>> = {};
  for (const kind of Object.keys(TOPIC_VARIABLE) as SourceKind[]) {
    const value = env[TOPIC_VARIABLE[kind]];
    if (value !== undefined) out[kind] = value;
  }
  return out;
}

/**
 * Refuses (a usage error: one line, exit 2) an environment that names another topic than the one
 * `schema` folds for a kind: the command would otherwise read or write where the live projection
 * does not. A kind the projection has no offsets for is not checked.
 */
export function refuseOtherTopics(
  command: string,
  schema: string,
  live: LiveSources,
  named: Partial<Record<SourceKind, string>>,
  kinds: SourceKind[] = ['vault', 'screen', 'catalogue'],
): void {
  for (const kind of kinds) {
    const source = live[kind];
    const value = named[kind];
    if (source && value !== undefined && value !== source.topic) {
      throw usageError(
        `${TOPIC_VARIABLE[kind]}=${value}, but the live projection ${schema} reads ${source.topic} (group ${source.group}): unset ${TOPIC_VARIABLE[kind]} or set it to ${source.topic} (${command} refused, nothing done)`,
      );
    }
  }
}
