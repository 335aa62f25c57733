import { createPublicClient, custom } from 'viem';
import { describe, expect, it } from 'vitest';
import { coalesceTransport } from './coalesce.js';

describe('coalesceTransport', () => {
  it('sends identical read calls in flight once; every caller gets the answer or the error', async () => {
    const sent: string[] = [];
    let fail = false;
    const transport = custom(
      {
        async request({ method, params }: { method: string; params?: unknown }) {
          const n = sent.push(JSON.stringify([method, params]));
          await new Promise((r) => setTimeout(r, 20));
          if (fail) throw new Error('header not found');
          return method === 'eth_blockNumber' ? '0x10' : `0x${n.toString(16)}`;
        },
      },
      { retryCount: 0 },
    );
    let joined = 0;
    const client = createPublicClient({
      transport: coalesceTransport(transport, { onCoalesced: () => joined++ }),
    });
    const call = (data: `0x${string}`) =>
      client.request({
        method: 'eth_call',
        params: [{ to: '0x0000000000000000000000000000000000000001', data }, '0x5'],
      });
    const [a, b, c] = await Promise.all([call('0x01'), call('0x01'), call('0x02')]);
    expect(a).toBe(b);
    expect(c).not.toBe(a);
    expect(sent).toHaveLength(2);
    expect(joined).toBe(1);
    // Not in flight any more: asked again.
    await call('0x01');
    expect(sent).toHaveLength(3);
    fail = true;
    const both = await Promise.allSettled([call('0x01'), call('0x01')]);
    expect(both.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(sent).toHaveLength(4);
    // Writes are never shared.
    fail = false;
    const tx = () => client.request({ method: 'eth_sendRawTransaction', params: ['0x00'] });
    await Promise.all([tx(), tx()]);
    expect(sent).toHaveLength(6);
  });
});
