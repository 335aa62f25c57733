import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { decodeRecord, encodeRecord, type VaultRecord } from '@vault-yield/domain';
import { kafkaBrokers, uniqueTopic } from '@vault-yield/test-kit';
import { createHistoryGenerator } from '@vault-yield/test-kit/history';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic, deleteTopics, publish } from '../projector/support.js';
import { runCli } from './run.js';

/** `vault-yield log tail` against a real broker: a log holding both encodings and a bad record. */

const topic = uniqueTopic('cli-log-tail');
const records = createHistoryGenerator({ vaults: 3, seed: 5 }).take(40);
const env = () => ({ KAFKA_BROKERS: kafkaBrokers().join(','), KAFKA_TOPIC: topic });
const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map(
      (l) =>
        JSON.parse(l) as {
          partition: number;
          offset: string;
          encoding?: string;
          record?: VaultRecord;
          error?: string;
          valueHex?: string;
        },
    );

beforeAll(async () => {
  // One partition: the order of the output is the order of publication.
  await createTopic(kafkaBrokers(), topic, 1);
  await publish(kafkaBrokers(), topic, records.slice(0, 20), [], 'json');
  await publish(kafkaBrokers(), topic, records.slice(20), [
    { key: records[0]!.vault, value: Buffer.from([0xb1, 0x03, 0x63]) },
  ]);
}, 60_000);
afterAll(deleteTopics);

describe('vault-yield log tail', () => {
  it('prints the last records as JSON whatever their encoding, and an undecodable one with its reason and bytes', async () => {
    const res = await runCli(['log', 'tail', '--last', '3'], env());
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const out = lines(res.stdout);
    expect(out.map((l) => l.offset)).toEqual(['38', '39', '40']);
    expect(out.slice(0, 2).map((l) => [l.encoding, l.record])).toEqual([
      ['binary', records[38]],
      ['binary', records[39]],
    ]);
    expect(out[2]).toEqual({ partition: 0, offset: '40', error: 'binary: unknown type', valueHex: 'b10363' });
  });

  it('reads from an offset, and only one vault', async () => {
    const vault = records[0]!.vault;
    const res = await runCli(
      [
        'log',
        'tail',
        '--partition',
        '0',
        '--from-offset',
        '18',
        '--vault',
        vault.toUpperCase().replace('0X', '0x'),
      ],
      env(),
    );
    expect(res.code).toBe(0);
    const out = lines(res.stdout);
    const expected = records.map((r, i) => ({ r, i })).filter(({ r, i }) => i >= 18 && r.vault === vault);
    expect(out.filter((l) => l.record).map((l) => [l.offset, l.encoding, l.record])).toEqual(
      expected.map(({ r, i }) => [String(i), i < 20 ? 'json' : 'binary', r]),
    );
    // The JSON records print as they decode: the same record as the binary encoding gives.
    const d = decodeRecord(encodeRecord(records[18]!));
    expect(d.ok && d.record).toEqual(records[18]);
    // The bad record is keyed by this vault too.
    expect(out.at(-1)).toMatchObject({ offset: '40', error: 'binary: unknown type' });
  });

  it('--follow prints records published after it started, until interrupted', async () => {
    const bin = fileURLToPath(new URL('../../services/cli/bin/vault-yield.js', import.meta.url));
    // From the current end (41 messages so far): only what is published from now on.
    const child = spawn(
      process.execPath,
      [bin, 'log', 'tail', '--follow', '--partition', '0', '--from-offset', '41'],
      {
        env: { ...process.env, LOG_LEVEL: 'warn', ...env() },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    const later = createHistoryGenerator({ vaults: 3, seed: 6 }).take(2);
    await publish(kafkaBrokers(), topic, later);
    for (let i = 0; i < 200 && lines(stdout).length < 2; i++) await new Promise((r) => setTimeout(r, 100));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(lines(stdout).map((l) => [l.offset, l.record])).toEqual([
      ['41', later[0]],
      ['42', later[1]],
    ]);
  }, 60_000);

  it('refuses bad arguments with a clear message', async () => {
    for (const args of [
      ['log', 'head'],
      ['log', 'tail', '--last', '-1'],
      ['log', 'tail', '--from-offset', '3'],
      ['log', 'tail', '--vault', 'x'],
    ]) {
      const res = await runCli(args, env());
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/^log: /);
    }
    const res = await runCli(['log', 'tail', '--partition', '7'], env());
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/has no partition 7/);
  });
});
