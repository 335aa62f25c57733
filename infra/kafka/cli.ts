// npm run kafka:start | kafka:stop — the local broker for machines without Docker.
import { startLocalKafka, stopLocalKafka } from './index.js';

const command = process.argv[2];
if (command === 'start') {
  const kafka = await startLocalKafka();
  if (process.argv.includes('--env')) console.log(`export KAFKA_BROKERS=${kafka.brokers.join(',')}`);
  else
    console.log(
      JSON.stringify({
        brokers: kafka.brokers.join(','),
        pid: kafka.pid,
        version: kafka.version,
        started: kafka.started,
      }),
    );
} else if (command === 'stop') {
  console.log((await stopLocalKafka()) ? 'stopped' : 'not running');
} else {
  console.error('usage: infra/kafka/cli.ts start [--env]|stop');
  process.exit(2);
}
