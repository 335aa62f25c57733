// npm run kafka:start | kafka:stop — the local broker for machines without Docker.
// npm run kafka:cluster — a 3-broker cluster (RF 3, min.insync.replicas=2, SASL, SSL and mutual
// TLS listeners) in the foreground until Ctrl-C; CLUSTER_KAFKA_PORT moves it (default 31700).
import { join } from 'node:path';
import { clusterSummary, startLocalKafkaCluster } from './cluster.js';
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
} else if (command === 'cluster') {
  const basePort = Number(process.env.CLUSTER_KAFKA_PORT ?? 31700);
  const cluster = await startLocalKafkaCluster({
    basePort,
    dataDir: join(import.meta.dirname, '.data', `cluster-${basePort}`),
  });
  console.log(JSON.stringify(clusterSummary(cluster), null, 2));
  const stop = () => void cluster.stop().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} else if (command === 'stop') {
  console.log((await stopLocalKafka()) ? 'stopped' : 'not running');
} else {
  console.error('usage: infra/kafka/cli.ts start [--env]|stop|cluster');
  process.exit(2);
}
