import type { Command } from '../command.js';

/** A command as `--help` lists it; its module is loaded only when it runs (fast start-up). */
export interface CommandEntry {
  name: string;
  summary: string;
  load: () => Promise<Command>;
}

/** Every command of the CLI, in the order `--help` lists them. */
export const commands: CommandEntry[] = [
  {
    name: 'dev',
    summary: 'run everything locally with the demo scenario and print the reader URL',
    load: async () => (await import('./dev.js')).devCommand,
  },
  {
    name: 'migrate',
    summary: 'apply pending database migrations to the projection schema',
    load: async () => (await import('./migrate.js')).migrateCommand,
  },
  {
    name: 'publish',
    summary: 'validate a screen result or strategy catalogue file and publish it to its topic',
    load: async () => (await import('./publish.js')).publishCommand,
  },
  {
    name: 'rebuild',
    summary: 'fold the whole log into a fresh schema, then switch the reader to it (zero downtime)',
    load: async () => (await import('./rebuild.js')).rebuildCommand,
  },
  {
    name: 'verify',
    summary: 'fold the log into a scratch schema and compare it with the live projection',
    load: async () => (await import('./verify.js')).verifyCommand,
  },
  {
    name: 'reindex',
    summary: 'rebuild the log itself from the chain into a new topic, then rebuild from it',
    load: async () => (await import('./reindex.js')).reindexCommand,
  },
  {
    name: 'republish',
    summary: "publish a vault's records of a block range again (fills a gap the projector holds at)",
    load: async () => (await import('./republish.js')).republishCommand,
  },
  {
    name: 'dead-letters',
    summary: 'list the records the projector could not apply, or retry them after a fix',
    load: async () => (await import('./dead-letters.js')).deadLettersCommand,
  },
  {
    name: 'log',
    summary: 'print records of the event log as JSON (`log tail`), whatever their encoding',
    load: async () => (await import('./log.js')).logCommand,
  },
  {
    name: 'webhooks',
    summary: 'callbacks: add, list, remove endpoints; deliveries, retry parked ones; run the deliverer',
    load: async () => (await import('./webhooks.js')).webhooksCommand,
  },
  {
    name: 'audit',
    summary: "value vaults from the chain at their snapshot's block and compare with what the reader serves",
    load: async () => (await import('./audit.js')).auditCommand,
  },
  {
    name: 'status',
    summary: 'indexer head vs chain head, projector lag per partition, live schema, dead letters',
    load: async () => (await import('./status.js')).statusCommand,
  },
];
