/**
 * compose's `demo` service (image target `chain`): plays the demo on the chain once. anvil keeps
 * its state in a volume (`--state`), so after `down`/`up` the chain — and the indexer's checkpoint
 * of it — are still the ones the demo made: when the factory already has code, there is nothing
 * to play and this exits 0. Otherwise it runs `infra/chain/cli.ts demo` against RPC_URL.
 */
import { spawnSync } from 'node:child_process';

const rpcUrl = process.env.RPC_URL ?? 'http://chain:8545';
const factory = process.env.FACTORY_ADDRESS;
if (!factory) {
  console.error('demo-once: FACTORY_ADDRESS is unset');
  process.exit(2);
}
const res = await fetch(rpcUrl, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getCode', params: [factory, 'latest'] }),
});
const { result } = (await res.json()) as { result?: string };
if (result && result !== '0x') {
  console.log(`demo-once: the factory ${factory} is deployed on ${rpcUrl} already: the demo was played`);
  process.exit(0);
}
const run = spawnSync(
  process.execPath,
  ['--import', 'tsx', 'infra/chain/cli.ts', 'demo', '--rpc-url', rpcUrl],
  {
    stdio: 'inherit',
  },
);
process.exit(run.status ?? 1);
