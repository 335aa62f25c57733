import { describe, expect, it } from 'vitest';
import { clusterSummary, type LocalCluster } from './cluster.js';

describe('clusterSummary (what `npm run kafka:cluster` prints)', () => {
  it('names addresses, files and the user, never the password or a key', () => {
    const password = 'Zm9vYmFyLXNlY3JldC1wYXNz';
    const cluster = {
      brokers: ['127.0.0.1:31700'],
      saslBrokers: ['127.0.0.1:31702'],
      sslBrokers: ['127.0.0.1:31703'],
      mtlsBrokers: ['127.0.0.1:31704'],
      caFile: '/d/ca.pem',
      clientCertFile: '/d/client.pem',
      clientKeyFile: '/d/client-key.pem',
      untrustedClientCertFile: '/d/untrusted.pem',
      untrustedClientKeyFile: '/d/untrusted-key.pem',
      user: { username: 'vault', password, passwordFile: '/d/sasl-password' },
    } as unknown as LocalCluster;
    const printed = JSON.stringify(clusterSummary(cluster));
    expect(printed).not.toContain(password);
    expect(printed).not.toMatch(/"password"/);
    expect(clusterSummary(cluster).user).toEqual({ username: 'vault', passwordFile: '/d/sasl-password' });
    expect(clusterSummary(cluster).saslBrokers).toEqual(['127.0.0.1:31702']);
  });
});
