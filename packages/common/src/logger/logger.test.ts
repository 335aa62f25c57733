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

describe('createLogger: a terminal gets pretty lines, a collector JSON; secrets never written', () => {
  const sink = (tty: boolean) => {
    const lines: string[] = [];
    const stream = Object.assign(
      new Writable({
        write(chunk, _enc, cb) {
          lines.push(String(chunk));
          cb();
        },
      }),
      tty ? { isTTY: true } : {},
    );
    return { lines, stream };
  };

  it('auto: one colourised line on a TTY (service/component, message, fields); JSON elsewhere', () => {
    const tty = sink(true);
    createLogger({ name: 'indexer', destination: tty.stream })
      .child({ component: 'sync' })
      .info({ block: 12 }, 'hello');
    expect(tty.lines).toHaveLength(1);
    const line = tty.lines[0]!;
    expect(() => JSON.parse(line)).toThrow();
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes are what a TTY gets
    const plain = line.replace(/\u001b\[[0-9;]*m/g, '');
    expect(plain).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: indexer\/sync: hello {"block":12}\n$/);
    expect(line).not.toBe(plain); // coloured
    const pipe = sink(false);
    createLogger({ name: 'indexer', destination: pipe.stream }).child({ component: 'sync' }).info('hello');
    expect(JSON.parse(pipe.lines[0]!)).toMatchObject({ service: 'indexer', component: 'sync', msg: 'hello' });
  });

  it('LOG_FORMAT json on a TTY writes JSON; pretty into a pipe writes plain pretty lines', () => {
    const tty = sink(true);
    createLogger({ name: 'reader', destination: tty.stream, format: 'json' }).info('x');
    expect(JSON.parse(tty.lines[0]!)).toMatchObject({ service: 'reader', msg: 'x' });
    const pipe = sink(false);
    createLogger({ name: 'reader', destination: pipe.stream, format: 'pretty' }).info('x');
    expect(pipe.lines[0]).toMatch(/INFO: reader: x\n$/);
  });

  it('passwords in URLs, RPC keys and secret-named fields are redacted in fields, messages and errors', () => {
    for (const format of ['json', 'pretty'] as const) {
      const s = sink(false);
      const log = createLogger({ name: 'indexer', destination: s.stream, format });
      log.info({ url: 'postgres://u:S3cretPass@db:5432/x', password: 'hunter2' }, 'connecting');
      log.error(`request to https://eth.example.com/v2/K3yK3yK3yK3y failed`);
      log.error(
        { err: new Error('HTTP request failed. URL: https://rpc.example.com/?apikey=K3yK3yK3yK3y') },
        'rpc',
      );
      log.child({ rpc: 'wss://rpc.example.com/ws/K3yK3yK3yK3y' }).info('child');
      const all = s.lines.join('');
      expect(all).not.toMatch(/S3cretPass|hunter2|K3yK3yK3yK3y/);
      expect(all).toContain('postgres://u:***@db:5432/***');
    }
  });
});

describe('createLogger: any destination pino takes', () => {
  it('an object with only write (no stream) gets every line', () => {
    const lines: string[] = [];
    const log = createLogger({ name: 'x', destination: { write: (line: string) => void lines.push(line) } });
    log.info('one');
    log.info('two');
    expect(lines.map((l) => JSON.parse(l).msg)).toEqual(['one', 'two']);
  });
});

describe('createLogger: one component a line, stack frames kept', () => {
  const capture = () => {
    const lines: string[] = [];
    return { lines, destination: { write: (line: string) => void lines.push(line) } };
  };

  it("a child's component joins its parent's: `component` once, as parent/child", () => {
    const c = capture();
    const projector = createLogger({ name: 'projector', destination: c.destination, format: 'json' }).child({
      component: 'projector',
    });
    projector.child({ component: 'follow-live' }).child({ partition: 3 }).info('x');
    projector.info('y');
    expect(c.lines[0]!.match(/"component":/g)).toHaveLength(1);
    expect(JSON.parse(c.lines[0]!)).toMatchObject({ component: 'projector/follow-live', partition: 3 });
    expect(JSON.parse(c.lines[1]!)).toMatchObject({ component: 'projector' });
    const p = capture();
    createLogger({ name: 'projector', destination: p.destination, format: 'pretty' })
      .child({ component: 'projector' })
      .child({ component: 'follow-live' })
      .info('z');
    expect(p.lines[0]).toMatch(/INFO: projector\/projector\/follow-live: z\n$/);
  });

  it("an error's stack keeps its frames' paths; the URL in its message loses its key", () => {
    const c = capture();
    const err = new Error('GET https://rpc.example.com/v2/K3yK3yK3yK3y failed');
    err.stack = `${err.message}\n    at read (file:///work/main/node_modules/@vault-yield/chain/src/rpc.ts:10:3)`;
    createLogger({ name: 'reader', destination: c.destination, format: 'json' }).error({ err }, 'rpc');
    const { err: logged } = JSON.parse(c.lines[0]!) as { err: { stack: string } };
    expect(logged.stack).toContain('file:///work/main/node_modules/@vault-yield/chain/src/rpc.ts:10:3');
    expect(c.lines[0]).not.toContain('K3yK3yK3yK3y');
  });
});
