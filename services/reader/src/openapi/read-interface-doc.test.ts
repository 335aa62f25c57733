import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { description } from './description.js';
import { readInterfaceDoc } from './read-interface-doc.js';

describe('docs/read-interface.md', () => {
  it('is the OpenAPI description as served (run `npm run docs:read-interface` after changing it)', () => {
    const file = readFileSync(
      fileURLToPath(new URL('../../../../docs/read-interface.md', import.meta.url)),
      'utf8',
    );
    expect(file).toBe(readInterfaceDoc());
    // every section of the served description is in it
    for (const heading of description.match(/^## .+$/gm) ?? []) expect(file).toContain(heading);
  });
});
