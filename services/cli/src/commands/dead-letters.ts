import { parseArgs } from 'node:util';
import { envField } from '@vault-yield/common';
import { vaultId } from '@vault-yield/domain';
import { retryDeadLetters } from '@vault-yield/projector';
import {
  createPgPool,
  createProjectionStore,
  type DeadLetterEntry,
  listDeadLetters,
  liveRecord,
} from '@vault-yield/store';
import type { Command } from '../command.js';
import { deadLettersEnvSchema } from '../config.js';
import { optionValue } from '../ops/env.js';

const help = `usage: vault-yield dead-letters list [--chain N] [--json] [--schema NAME]
       vault-yield dead-letters retry [--id N] [--schema NAME]

A dead letter is a record the projector could not apply: it does not decode (kind decode),
breaks the log's rules (envelope), or made the fold throw (fold: a bug), or is held behind a
gap in its vault's sequence numbers (gap: a record before it is missing; the projector folds it
by itself once \`vault-yield republish\` has published the missing ones). Its vault's snapshot
says \`behind\` until it is re-applied. A retry never folds past a gap: a vault whose letters
leave numbers missing stays, with the numbers to republish.

  list    every dead letter: id, partition:offset, vault (its id eip155:CHAIN:0x…; a letter whose
          record did not decode names its address alone, chain unknown), kind, reason
  retry   after a fix is deployed: re-applies the dead letters (all, or the one --id N), each
          vault in one transaction, in the vault's order (its ledger is re-folded with the
          letters in place), exactly once (letters are locked; a record already in the ledger
          is not added twice); the vault's rows become those of a clean run. A letter that
          still fails stays, with its reason. Exit 1 when any stays.

options:
  --schema NAME   projection schema (default: the live schema behind $VIEWS_SCHEMA, else
                  $PROJECTION_SCHEMA)
  --id N          retry only dead letter N
  --chain N       list the letters of chain N only (and those of no known chain: undecodable)
  --json          list as JSON

environment:
  DATABASE_URL (required), VIEWS_SCHEMA, PROJECTION_SCHEMA, LOG_LEVEL`;

/** A letter's vault: its id when its chain is known, else its address (chain unknown), else unknown. */
export const letterVault = (l: Pick<DeadLetterEntry, 'vault' | 'chainId'>): string =>
  l.vault === null
    ? '(vault unknown)'
    : l.chainId === null
      ? `${l.vault} (chain unknown)`
      : vaultId(l.chainId, l.vault);

export const deadLettersCommand: Command<typeof deadLettersEnvSchema> = {
  env: deadLettersEnvSchema,
  log: { name: 'cli', stdout: true },
  help,
  async run(argv, context) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        schema: { type: 'string' },
        id: { type: 'string' },
        chain: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    const sub = positionals[0];
    if (sub !== 'list' && sub !== 'retry') {
      console.error(`dead-letters: expected \`list\` or \`retry\`, got ${sub ?? 'nothing'}\n\n${help}`);
      return 2;
    }
    let id: number | undefined;
    if (values.id !== undefined) {
      if (!/^[1-9]\d{0,17}$/.test(values.id)) {
        console.error(`dead-letters: --id must be a positive integer, got ${values.id}`);
        return 2;
      }
      id = Number(values.id);
    }
    let chain: number | undefined;
    if (values.chain !== undefined) {
      if (sub !== 'list') {
        console.error('dead-letters: --chain is for `list` (retry takes every letter, or --id N)');
        return 2;
      }
      if (!/^[1-9]\d{0,15}$/.test(values.chain)) {
        console.error(`dead-letters: --chain must be a positive integer, got ${values.chain}`);
        return 2;
      }
      chain = Number(values.chain);
    }
    const { config: env, log } = context();
    const admin = createPgPool({
      url: env.DATABASE_URL,
      applicationName: 'vault-yield-dead-letters',
      max: 1,
    });
    let schema: string;
    try {
      schema = values.schema
        ? optionValue('schema', envField.identifier(), values.schema)
        : ((await liveRecord(admin, env.VIEWS_SCHEMA))?.schema ?? env.PROJECTION_SCHEMA);
      if (sub === 'list') {
        const letters = (await listDeadLetters(admin, schema)).filter(
          (l) => chain === undefined || l.chainId === null || l.chainId === chain,
        );
        if (values.json) console.log(JSON.stringify(letters, null, 2));
        else if (letters.length === 0) console.log(`no dead letters in ${schema}`);
        else
          for (const l of letters)
            console.log(
              `${String(l.id).padStart(6)}  ${l.topic}:${l.partition}:${l.offset}  ${letterVault(l)}  ${l.kind ?? '-'}  ${l.reason}`,
            );
        return 0;
      }
    } finally {
      await admin.end();
    }
    const pool = createPgPool({
      url: env.DATABASE_URL,
      schema,
      applicationName: 'vault-yield-dead-letters',
      max: 1,
    });
    try {
      const outcomes = await retryDeadLetters(createProjectionStore(pool), log, { id });
      if (id !== undefined && outcomes.length === 0) {
        console.error(`dead-letters: no dead letter ${id} in ${schema}`);
        return 1;
      }
      for (const o of outcomes)
        console.log(
          `${o.ok ? 're-applied' : 'left'}  ${o.vault ?? '(vault unknown)'}  ids ${o.ids.join(',')}${o.reason ? `  ${o.reason}` : ''}`,
        );
      return outcomes.every((o) => o.ok) ? 0 : 1;
    } finally {
      await pool.end();
    }
  },
};
