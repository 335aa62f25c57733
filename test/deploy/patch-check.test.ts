import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  assertKafkajsPatched,
  createPublisher,
  KAFKAJS_PATCH_MARKER,
  KafkajsUnpatchedError,
  kafkajsPatchedFile,
} from '@vault-yield/log';
import { setKafkajsPatchedFileForTests } from '@vault-yield/log/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'kafkajs-unpatched-'));
/** The installed sendMessages.js with every line of the patch's marker comment taken out. */
const unpatched = join(dir, 'sendMessages.js');
writeFileSync(
  unpatched,
  readFileSync(kafkajsPatchedFile(), 'utf8')
    .split('\n')
    .filter((l) => !l.includes(KAFKAJS_PATCH_MARKER))
    .join('\n'),
);

afterEach(() => setKafkajsPatchedFileForTests(undefined));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the kafkajs patch marker check', () => {
  it('passes on the installed kafkajs (patched by the root postinstall)', () => {
    expect(readFileSync(kafkajsPatchedFile(), 'utf8')).toContain(KAFKAJS_PATCH_MARKER);
    expect(() => assertKafkajsPatched()).not.toThrow();
  });

  it('throws on an unpatched copy, naming npm install with scripts and the image', () => {
    let error: unknown;
    try {
      assertKafkajsPatched(unpatched);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(KafkajsUnpatchedError);
    const message = (error as Error).message;
    expect(message).toContain(unpatched);
    expect(message).toMatch(/npm ci. or .npm install. without --ignore-scripts/);
    expect(message).toContain('infra/docker/Dockerfile');
  });

  it('throws on a missing file', () => {
    expect(() => assertKafkajsPatched(join(dir, 'absent.js'))).toThrow(KafkajsUnpatchedError);
  });

  it('makes the publisher refuse to start before it connects', async () => {
    setKafkajsPatchedFileForTests(unpatched);
    // No broker listens on port 1: a publisher that got as far as connecting would fail otherwise.
    await expect(
      createPublisher({ brokers: ['127.0.0.1:1'], clientId: 'patch-check', topic: 'none', retries: 0 }),
    ).rejects.toThrow(KafkajsUnpatchedError);
  });
});
