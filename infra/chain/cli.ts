/**
 * Local chain CLI.
 *   node --import tsx infra/chain/cli.ts demo [--block-time N]   start anvil, deploy, play the demo,
 *                                                                  print the stack as JSON, keep running
 *                                                                  with its feeds kept fresh
 *   node --import tsx infra/chain/cli.ts bulk [--vaults 100] [--events 1000]
 *                                                                  start anvil, deploy, generate, print
 *                                                                  the figure, stop
 * Add `--rpc-url URL` to use a running node instead of starting anvil.
 */
import { parseArgs } from 'node:util';
import { startAnvil } from './anvil.js';
import { keepFeedsFresh } from './feeds.js';
import { playBulk } from './scenario/bulk.js';
import { playDemoScenario } from './scenario/demo.js';
import { deployReferenceStack } from './scenario/deploy.js';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    'rpc-url': { type: 'string' },
    'block-time': { type: 'string' },
    vaults: { type: 'string', default: '100' },
    events: { type: 'string', default: '1000' },
  },
});
const command = positionals[0] ?? 'demo';
const json = (v: unknown) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? x.toString() : x), 2);

async function main(): Promise<void> {
  const anvil = values['rpc-url']
    ? null
    : await startAnvil(
        command === 'demo' && values['block-time'] ? { blockTime: Number(values['block-time']) } : {},
      );
  const rpcUrl = values['rpc-url'] ?? anvil!.rpcUrl;
  const stack = await deployReferenceStack(rpcUrl);
  const { clients: _clients, ...printable } = stack;
  if (command === 'bulk') {
    const r = await playBulk(stack, {
      vaults: Number(values.vaults),
      eventsPerVault: Number(values.events),
      onProgress: (n, total) => process.stderr.write(`\r${n}/${total} txs`),
    });
    process.stderr.write('\n');
    console.log(json({ ...r, vaults: r.vaults.length }));
    await anvil?.stop();
    return;
  }
  const demo = await playDemoScenario(stack);
  console.log(json({ rpcUrl, stack: printable, demo }));
  if (!anvil) return;
  console.error(`anvil pid ${anvil.pid} on ${rpcUrl}; Ctrl-C to stop`);
  // A live chain's feeds beat: without this, its prices go stale an hour after the demo.
  const keeper = keepFeedsFresh(stack, {
    logger: (level, message, fields) => {
      if (level === 'warn') console.error(message, fields);
    },
  });
  const stop = () =>
    void keeper
      .stop()
      .then(() => anvil.stop())
      .then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
