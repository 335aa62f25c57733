import { describe, expect, it } from 'vitest';
import { classifyRpcError } from './errors.js';

const err = (message: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(message), extra);

describe('classifyRpcError', () => {
  it.each([
    ['query returned more than 10000 results', 'range'],
    ['eth_getLogs block range is too large', 'range'],
    ['exceed maximum block range: 5000', 'range'],
    ['Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range', 'range'],
    ['HTTP response body exceeded the size limit.', 'range'],
    ['nonce too low', 'fatal'],
    ['request timed out', 'timeout'],
    ['fetch failed', 'transient'],
    ['execution reverted', 'fatal'],
    ['header not found', 'behind'],
    ['header for hash not found', 'behind'],
    ['unknown block', 'behind'],
    ['block out of range', 'behind'],
    ['block range extends beyond current head block', 'behind'],
    ['toBlock is greater than the latest block', 'behind'],
  ] as const)('%s → %s', (message, kind) => {
    expect(classifyRpcError(err(message))).toBe(kind);
  });

  it('reads codes and HTTP statuses through causes', () => {
    expect(classifyRpcError(err('x', { cause: err('y', { code: -32005 }) }))).toBe('range');
    expect(classifyRpcError(err('x', { status: 429 }))).toBe('rate-limit');
    expect(classifyRpcError(err('x', { status: 503 }))).toBe('transient');
    expect(classifyRpcError(err('x', { name: 'TimeoutError' }))).toBe('timeout');
    expect(classifyRpcError(Object.assign(err('x'), { name: 'TimeoutError' }))).toBe('timeout');
  });
});

describe('classifyRpcError through a wrapping error', () => {
  it('classifies by the cause a wrapper keeps (a multicall that failed as a whole)', () => {
    const timeout = Object.assign(new Error('The request took too long to respond.'), {
      name: 'TimeoutError',
      details: 'The request timed out.',
    });
    expect(classifyRpcError(new Error('slot0 on 0xpool at block 5 failed: x', { cause: timeout }))).toBe(
      'timeout',
    );
    expect(classifyRpcError(new Error('slot0 failed', { cause: err('x', { status: 429 }) }))).toBe(
      'rate-limit',
    );
  });
});
