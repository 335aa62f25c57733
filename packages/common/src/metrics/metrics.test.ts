import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { serveMetrics } from './index.js';

describe('serveMetrics (indexer, projector, webhooks deliverer)', () => {
  it('serves /metrics and /health on loopback, 404 in the error shape otherwise, 500 when the registry fails', async () => {
    let fail = false;
    const registry = {
      contentType: 'text/plain; version=0.0.4',
      metrics: async () => {
        if (fail) throw new Error('collector broke');
        return 'x_total 1\n';
      },
    };
    const server = await serveMetrics(registry, 0);
    try {
      const { address, port } = server.address() as AddressInfo;
      expect(address).toBe('127.0.0.1');
      const base = `http://127.0.0.1:${port}`;
      const metrics = await fetch(`${base}/metrics`);
      expect(metrics.status).toBe(200);
      expect(metrics.headers.get('content-type')).toBe(registry.contentType);
      expect(await metrics.text()).toBe('x_total 1\n');
      expect(await (await fetch(`${base}/health`)).json()).toEqual({ status: 'ok' });
      const other = await fetch(`${base}/other`);
      expect(other.status).toBe(404);
      expect(((await other.json()) as { error: { code: string } }).error.code).toBe('not_found');
      expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(404);
      fail = true;
      const broken = await fetch(`${base}/metrics`);
      expect(broken.status).toBe(500);
      expect(await broken.text()).not.toContain('collector broke');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
