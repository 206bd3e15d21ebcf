import { describe, expect, it } from 'vitest';
import type { StoredPasskey } from '../../src/accounts/passkeys/credentials.js';
import { checkSignCount } from '../../src/actions/passkeys/sign-count.js';

function recorder() {
  const warnings: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  return { warnings, log: { info() {}, warn: (obj: Record<string, unknown>, msg: string) => void warnings.push({ obj, msg }) } };
}

const passkey = (signCount: number) => ({ id: 7, userId: 3, signCount }) as StoredPasskey;

describe('sign-count check', () => {
  it('is quiet while the counter grows, and for synced passkeys that always report 0', () => {
    for (const [stored, presented] of [[0, 1], [5, 6], [0, 0]] as const) {
      const r = recorder();
      checkSignCount(r.log, passkey(stored), presented);
      expect(r.warnings).toEqual([]);
    }
  });

  it('logs a counter that stood still or went back, with the passkey and both values', () => {
    for (const [stored, presented] of [[5, 5], [5, 2], [5, 0]] as const) {
      const r = recorder();
      checkSignCount(r.log, passkey(stored), presented);
      expect(r.warnings).toEqual([
        { obj: { passkey_id: 7, user_id: 3, stored_sign_count: stored, presented_sign_count: presented }, msg: 'passkey sign count did not increase' },
      ]);
    }
  });
});
