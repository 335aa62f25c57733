import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * A line of patches/kafkajs+2.2.4.patch (the fix for acknowledged records lost when a partition
 * leader moves during a retry, tulios/kafkajs#1303): present in the installed kafkajs only when
 * `patch-package` ran at install (the root `postinstall`).
 */
export const KAFKAJS_PATCH_MARKER = 'vault-yield patch (tulios/kafkajs#1303';

/** The file the patch changes, in the kafkajs this process loads. */
export function kafkajsPatchedFile(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('kafkajs')), 'src', 'producer', 'sendMessages.js');
}

export class KafkajsUnpatchedError extends Error {
  constructor(file: string, why: string) {
    super(
      `kafkajs is not patched (${file}: ${why}): its producer can lose acknowledged records on a ` +
        'broker failover (tulios/kafkajs#1303). Install with scripts — `npm ci` or `npm install` ' +
        'without --ignore-scripts, so the root postinstall runs patch-package with patches/ — or ' +
        'run the image built by infra/docker/Dockerfile, which does',
    );
    this.name = 'KafkajsUnpatchedError';
  }
}

let overrideFile: string | undefined;
const checked = new Set<string>();

/** Tests only: check this file instead of the installed kafkajs (undefined restores it). */
export function setKafkajsPatchedFileForTests(file: string | undefined): void {
  overrideFile = file;
}

/** Throws KafkajsUnpatchedError unless the kafkajs in use carries the patch (checked once a file). */
export function assertKafkajsPatched(file: string = overrideFile ?? kafkajsPatchedFile()): void {
  if (checked.has(file)) return;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new KafkajsUnpatchedError(file, `unreadable: ${(err as Error).message}`);
  }
  if (!text.includes(KAFKAJS_PATCH_MARKER))
    throw new KafkajsUnpatchedError(file, 'the patch marker is missing');
  checked.add(file);
}
