import { join } from 'node:path';
import { type LocalCluster, startLocalKafkaCluster } from '@vault-yield/devstack/kafka';

/** First port of the test cluster: node i uses base + 10·i … + 4 (CLUSTER_KAFKA_PORT, default 31700; below the
 * ephemeral range 32768–60999: a node's outgoing connection can otherwise hold a port another node needs). */
export const clusterBasePort = (): number => Number(process.env.CLUSTER_KAFKA_PORT ?? 31700);

/**
 * The 3-broker KRaft cluster of one test file (RF 3, min.insync.replicas=2, SASL and SSL
 * listeners), data under infra/kafka/.data/cluster-<base port>. Taken ports fail with a clear error.
 */
export async function startTestCluster(): Promise<LocalCluster> {
  const base = clusterBasePort();
  const dataDir = join(import.meta.dirname, '..', '..', 'infra', 'kafka', '.data', `cluster-${base}`);
  try {
    return await startLocalKafkaCluster({ basePort: base, dataDir, heapMiB: 384 });
  } catch (err) {
    const message = (err as Error).message;
    if (message.includes('is taken')) throw new Error(`${message}; set CLUSTER_KAFKA_PORT to another base`);
    throw err;
  }
}
