import { description } from './description.js';

/**
 * docs/read-interface.md: the read interface as this repository serves it — every decision on the
 * seed's gaps, the same text as the OpenAPI document's description (one source), for people
 * reading the repository rather than /docs. Written by `npm run docs:read-interface`; a test
 * fails when the file and the description differ.
 */
export function readInterfaceDoc(): string {
  return [
    '<!-- Generated from services/reader/src/openapi/description.ts by `npm run docs:read-interface`: edit that file, not this one. -->',
    '# Read interface',
    '',
    'The reader serves the read interface of the seed (every field, rule and endpoint), and writes',
    'down here every decision the seed leaves open. The machine-readable form, with every schema and',
    'example, is the OpenAPI 3.1 document the reader serves at `/openapi.json` (interactive at `/docs`).',
    '',
    description.trim(),
    '',
  ].join('\n');
}
