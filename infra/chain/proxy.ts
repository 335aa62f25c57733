import { connect, createServer, type Server, type Socket } from 'node:net';

/** A TCP proxy in front of a node's RPC port, whose link can be cut (node down) and restored. */
export interface CuttableProxy {
  /** `http://127.0.0.1:{port}` of the proxy. */
  readonly url: string;
  /** Cuts the link: open connections are reset, new ones reset at once (a node that stopped). */
  cut(): void;
  /** Restores the link: new connections reach the node again. */
  restore(): void;
  close(): Promise<void>;
}

/**
 * Proxies 127.0.0.1:{free port} to `targetUrl`'s host and port. Cutting it stands for a node that
 * went down (connections refused and reset) while the node itself keeps its state and its blocks,
 * so the chain goes on without its indexer seeing it — deterministic, unlike stopping and reloading
 * anvil.
 */
export async function cuttableProxy(targetUrl: string): Promise<CuttableProxy> {
  const target = new URL(targetUrl);
  const open = new Set<Socket>();
  let down = false;
  const reset = (s: Socket) => (typeof s.resetAndDestroy === 'function' ? s.resetAndDestroy() : s.destroy());
  const server: Server = createServer((client) => {
    if (down) {
      reset(client);
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    open.add(client);
    open.add(upstream);
    const drop = () => {
      open.delete(client);
      open.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(0, '127.0.0.1', () => res());
  });
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    cut() {
      down = true;
      for (const s of [...open]) reset(s);
      open.clear();
    },
    restore() {
      down = false;
    },
    close() {
      down = true;
      for (const s of [...open]) s.destroy();
      open.clear();
      return new Promise<void>((res) => server.close(() => res()));
    },
  };
}
