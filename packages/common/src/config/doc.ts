import type { z } from 'zod';

/** What the README's configuration table says of a variable (see scripts/config-table.ts). */
export interface EnvDoc {
  description: string;
  /** The default column's text when the schema's own default does not say it (optional fields). */
  unset?: string;
}

/** Attaches the README text to an env field (its `meta`): the text lives beside the schema. */
export function doc<T extends z.ZodType>(field: T, description: string, unset?: string): T {
  return field.meta(unset === undefined ? { description } : { description, unset });
}
