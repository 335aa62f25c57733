import { createPublicClient, custom } from 'viem';
import { describe, expect, it } from 'vitest';
import { coalesceTransport, UNSHARED } from './coalesce.js';

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

  it('never joins a call marked UNSHARED to one in flight (it must be answered by a request sent after it)', async () => {
    let sent = 0;
    let head = 5;
    const transport = custom(
      {
        async request() {
          sent++;
          const answer = head;
          await new Promise((r) => setTimeout(r, 20));
          return `0x${answer.toString(16)}`;
        },
      },
      { retryCount: 0 },
    );
    let joined = 0;
    const client = createPublicClient({
      transport: coalesceTransport(transport, { onCoalesced: () => joined++ }),
    });
    const early = client.request({ method: 'eth_blockNumber' });
    head = 6; // the head moves while the first request is out
    const late = client.request({ method: 'eth_blockNumber', [UNSHARED]: true } as {
      method: 'eth_blockNumber';
    });
    expect(await early).toBe('0x5');
    expect(await late).toBe('0x6');
    expect(sent).toBe(2);
    expect(joined).toBe(0);
    // Unmarked, the same call joins the one in flight.
    const [a, b] = await Promise.all([
      client.request({ method: 'eth_blockNumber' }),
      client.request({ method: 'eth_blockNumber' }),
    ]);
    expect(a).toBe(b);
    expect(joined).toBe(1);
  });
});
