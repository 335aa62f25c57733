import { describe, expect, it } from 'vitest';
import { dataDirFor, kraftClusterId } from './index.js';

describe('kraftClusterId', () => {
  it('is a 16-byte base64url id that never starts with "-" (StorageTool would read it as an option)', () => {
    for (let i = 0; i < 5_000; i++) {
      const id = kraftClusterId();
      expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
      expect(Buffer.from(id, 'base64url')).toHaveLength(16);
    }
  });
});

describe('dataDirFor', () => {
  it('gives each port its own data dir (a start or stop on one port never touches another broker)', () => {
    const dirs = [19092, 29092, 29100, 29200].map(dataDirFor);
    expect(new Set(dirs).size).toBe(4);
    expect(dirs[0]).toMatch(/infra\/kafka\/\.data$/);
    expect(dirs[2]).toMatch(/infra\/kafka\/\.data\/port-29100$/);
  });
});
