import { describe, expect, it } from 'vitest';
import { kraftClusterId } from './index.js';

describe('kraftClusterId', () => {
  it('is a 16-byte base64url id that never starts with "-" (StorageTool would read it as an option)', () => {
    for (let i = 0; i < 5_000; i++) {
      const id = kraftClusterId();
      expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
      expect(Buffer.from(id, 'base64url')).toHaveLength(16);
    }
  });
});
