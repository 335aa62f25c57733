import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from './index.js';

describe('createLogger', () => {
  it('writes one JSON object per line with service, level label and ISO time', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const log = createLogger({ name: 'indexer', level: 'info', destination: sink });
    log.info({ block: 12 }, 'hello');
    log.debug('dropped below level');
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ service: 'indexer', level: 'info', block: 12, msg: 'hello' });
    expect(new Date(line.time).toISOString()).toBe(line.time);
  });
});
