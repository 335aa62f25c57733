import { createConnection, createServer, type Socket } from 'node:net';
import { type AnvilInstance, startAnvil } from '@vault-yield/devstack/chain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHeadWatcher } from './index.js';

describe('head watcher against a real anvil', () => {
  let anvil: AnvilInstance;
  beforeAll(async () => {
    anvil = await startAnvil();
  }, 60_000);
  afterAll(async () => {
    await anvil?.stop();
  });
  const mine = () =>
    fetch(anvil.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'evm_mine', params: [] }),
    });

  it('wakes a waiter when the node announces a head, long before its poll interval', async () => {
    const modes: string[] = [];
    const watcher = createHeadWatcher({
      wsUrl: anvil.rpcUrl.replace(/^http/, 'ws'),
      onModeChange: (m) => modes.push(m),
    });
    const signal = new AbortController().signal;
    try {
      // The subscription takes a moment to open: mine until a head is announced.
      for (let i = 0; i < 50 && watcher.heads === 0; i++) {
        await mine();
        await watcher.wait(200, signal);
      }
      expect(watcher.mode).toBe('subscribed');
      const before = watcher.heads;
      const woke = watcher.wait(600_000, signal).then(() => watcher.heads);
      await mine();
      // Resolved by the head, not by the ten-minute timeout (the test would time out instead).
      expect(await woke).toBe(before + 1);
      // A head announced while the caller was busy (after it read `heads`) is not slept through.
      const seen = watcher.heads;
      await mine();
      for (let i = 0; i < 100 && watcher.heads === seen; i++) await new Promise((r) => setTimeout(r, 10));
      expect(watcher.heads).toBe(seen + 1);
      // Resolves at once (else the ten-minute wait outlasts the test's time-out).
      await watcher.wait(600_000, signal, seen);
      expect(modes).toEqual(['subscribed']);
    } finally {
      await watcher.close();
    }
  });

  it('without a subscription, wait is the poll interval; abort ends it at once', async () => {
    const watcher = createHeadWatcher({ wsUrl: 'ws://127.0.0.1:9' });
    const ctl = new AbortController();
    try {
      await mine();
      const t0 = Date.now();
      await watcher.wait(300, ctl.signal);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
      expect(watcher.mode).toBe('polling');
      expect(watcher.heads).toBe(0);
      const pending = watcher.wait(600_000, ctl.signal);
      ctl.abort();
      await pending;
    } finally {
      await watcher.close();
    }
  });

  it('a dropped socket turns it to polling, and it subscribes again by itself', async () => {
    // A TCP relay in front of anvil whose connections can be cut.
    const target = new URL(anvil.rpcUrl);
    const open = new Set<Socket>();
    const relay = createServer((client) => {
      const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
      for (const s of [client, upstream]) {
        open.add(s);
        s.on('close', () => open.delete(s));
        s.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const { port } = relay.address() as { port: number };
    const modes: string[] = [];
    const watcher = createHeadWatcher({
      wsUrl: `ws://127.0.0.1:${port}`,
      onModeChange: (m) => modes.push(m),
    });
    const signal = new AbortController().signal;
    const subscribed = async () => {
      for (let i = 0; i < 100 && watcher.mode !== 'subscribed'; i++) {
        await mine();
        await watcher.wait(100, signal);
      }
      expect(watcher.mode).toBe('subscribed');
    };
    try {
      await subscribed();
      for (const s of open) s.destroy();
      for (let i = 0; i < 50 && watcher.mode !== 'polling'; i++) await watcher.wait(100, signal);
      expect(watcher.mode).toBe('polling');
      // Back after its 1 s backoff, through the same relay.
      await subscribed();
      expect(modes).toEqual(['subscribed', 'polling', 'subscribed']);
    } finally {
      await watcher.close();
      for (const s of open) s.destroy();
      relay.close();
    }
  }, 30_000);
});
