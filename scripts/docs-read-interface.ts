/** Writes docs/read-interface.md and docs/lp-figures.md from the OpenAPI description (readInterfaceDoc, lpFiguresDoc). */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { lpFiguresDoc, readInterfaceDoc } from '@vault-yield/reader';

for (const [file, text] of [
  ['read-interface.md', readInterfaceDoc()],
  ['lp-figures.md', lpFiguresDoc()],
] as const) {
  const target = fileURLToPath(new URL(`../docs/${file}`, import.meta.url));
  writeFileSync(target, text);
  console.log(`wrote ${target}`);
}
