import { ConfigError } from '@vault-yield/common';
import { describe, expect, it } from 'vitest';
import { failure, usageError } from './env.js';
import { describeFailure, endpointOf } from './failure.js';

const KEY = 'K3yK3yK3yK3y';
const env = {
  DATABASE_URL: 'postgres://vault:pw@db.internal:5432/vault_yield',
  RPC_URL: `https://eth.example.com/v2/${KEY}?apikey=${KEY}`,
  KAFKA_BROKERS: '127.0.0.1:9092',
};

/** A library's error as viem builds them: the URL in its message, details and meta messages. */
function viemLike(name: string, shortMessage: string): Error {
  const err = new Error(
    `${shortMessage}\n\nURL: ${env.RPC_URL}\nRequest body: {"method":"eth_call"}\n\nDetails: at ${env.RPC_URL}\nVersion: viem@2`,
  );
  return Object.assign(err, {
    name,
    shortMessage,
    details: `requested ${env.RPC_URL}`,
    metaMessages: [`URL: ${env.RPC_URL}`],
  });
}

describe('describeFailure: one line, its exit code, redacted', () => {
  it('a value refused is exit 2 with its own words; a failure exit 1', () => {
    expect(describeFailure(usageError('--vault is required'), env)).toEqual({
      exitCode: 2,
      message: '--vault is required',
    });
    expect(describeFailure(new ConfigError('invalid configuration:\n  X: bad'), env).exitCode).toBe(2);
    expect(describeFailure(failure('nothing to re-derive'), env)).toEqual({
      exitCode: 1,
      message: 'nothing to re-derive',
    });
  });

  it("a library's error: its short message and details on one line, every URL in them redacted", () => {
    const out = describeFailure(
      viemLike('BlockOutOfRangeError', 'Block at number "158" could not be found.'),
      env,
    );
    expect(out.exitCode).toBe(1);
    expect(out.message).not.toContain('\n');
    expect(out.message).not.toContain(KEY);
    expect(out.message).toBe(
      'BlockOutOfRangeError: Block at number "158" could not be found (requested https://eth.example.com/***?***) (run again with --debug for the stack)',
    );
  });

  it('an RPC node that does not answer names RPC_URL by scheme://host:port', () => {
    const err = Object.assign(viemLike('HttpRequestError', 'HTTP request failed.'), {
      details: 'fetch failed',
      cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' }),
    });
    expect(describeFailure(err, env).message).toBe(
      'the RPC node does not answer (HTTP request failed (fetch failed): connect ECONNREFUSED 10.0.0.1:443): ' +
        'is the node up? RPC_URL points at https://eth.example.com',
    );
  });

  it('a connection refused or a host unknown names the database variable it is for', () => {
    const refused = Object.assign(new Error('getaddrinfo ENOTFOUND db.internal'), {
      code: 'ENOTFOUND',
      hostname: 'db.internal',
    });
    expect(describeFailure(refused, env).message).toBe(
      'Postgres does not answer (ENOTFOUND db.internal): is Postgres up? DATABASE_URL points at db.internal:5432',
    );
    const elsewhere = Object.assign(new Error('connect ECONNREFUSED 10.1.1.1:6379'), {
      code: 'ECONNREFUSED',
      address: '10.1.1.1',
      port: 6379,
    });
    expect(describeFailure(elsewhere, env).message).toBe(
      'cannot connect (ECONNREFUSED 10.1.1.1:6379): is the service at 10.1.1.1:6379 up?',
    );
  });

  it('an endpoint is shown without userinfo, path or query', () => {
    expect(endpointOf('https://u:p@rpc.example.com:8545/v2/k?x=1')).toBe('https://rpc.example.com:8545');
    expect(endpointOf('not a url')).toBeNull();
  });
});
