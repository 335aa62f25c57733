/** Writes docs/read-interface.md from the OpenAPI description (see readInterfaceDoc). */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readInterfaceDoc } from '@vault-yield/reader';

const target = fileURLToPath(new URL('../docs/read-interface.md', import.meta.url));
writeFileSync(target, readInterfaceDoc());
console.log(`wrote ${target}`);
