import type { Hook } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import { badRequest, errorResponse } from '../errors.js';
import { LIMITS, REPEATABLE } from '../params.js';

/** The query parameter names a route declares (none when it declares no query schema). */
export function queryNames(query: z.ZodType | undefined): ReadonlySet<string> {
  const shape = (query as { shape?: Record<string, unknown> } | undefined)?.shape;
  return new Set(shape ? Object.keys(shape) : []);
}

/**
 * The checks a schema cannot make because the validator sees the query already grouped: an
 * unknown parameter, a single-valued one given twice, an empty value or one longer than
 * LIMITS.valueLength is a 400, in the order the parameters appear. The names come from the
 * route's own query schema.
 */
export function rawQuery(names: ReadonlySet<string>): MiddlewareHandler {
  return async (c, next) => {
    const url = c.req.url;
    const q = url.indexOf('?');
    if (q >= 0) {
      const seen = new Set<string>();
      for (const [key, value] of new URLSearchParams(url.slice(q + 1))) {
        const name = key.length > 64 ? `${key.slice(0, 64)}…` : key;
        if (!names.has(key)) throw badRequest(`query.${JSON.stringify(name)}: unknown query parameter`);
        if (value === '') throw badRequest(`query.${key}: must not be empty`);
        if (value.length > LIMITS.valueLength)
          throw badRequest(`query.${key}: longer than ${LIMITS.valueLength} characters`);
        if (seen.has(key) && !REPEATABLE.has(key)) throw badRequest(`query.${key}: given more than once`);
        seen.add(key);
      }
    }
    await next();
  };
}

const WHERE: Record<string, string> = { query: 'query', param: 'path' };

/** Validation failures become the one error shape, naming the parameter: `query.limit: …`. */
// biome-ignore lint/suspicious/noExplicitAny: the hook is shared by every route's input type
export const validationHook: Hook<any, any, any, any> = (result, c) => {
  if (result.success) return;
  const issue = result.error.issues[0];
  const path = (issue?.path ?? []).filter((p): p is string => typeof p === 'string');
  const where = WHERE[result.target] ?? result.target;
  return errorResponse(
    c,
    400,
    'invalid_request',
    `${[where, ...path].join('.')}: ${issue?.message ?? 'invalid'}`,
  );
};
