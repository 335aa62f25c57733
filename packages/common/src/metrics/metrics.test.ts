import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { type HealthCheck, serveMetrics } from './index.js';

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

  it("answers /health from the process's own check: 200 with its status, 503 with the reason", async () => {
    let state: ReturnType<HealthCheck> = { ok: true, status: 'standby' };
    const registry = { contentType: 'text/plain', metrics: async () => '' };
    const server = await serveMetrics(registry, 0, '127.0.0.1', () => state);
    try {
      const { port } = server.address() as AddressInfo;
      const health = () => fetch(`http://127.0.0.1:${port}/health`);
      const up = await health();
      expect([up.status, await up.json()]).toEqual([200, { status: 'standby' }]);
      state = { ok: false, reason: 'database unreachable: ECONNREFUSED' };
      const down = await health();
      expect([down.status, await down.json()]).toEqual([
        503,
        { status: 'unavailable', reason: 'database unreachable: ECONNREFUSED' },
      ]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
