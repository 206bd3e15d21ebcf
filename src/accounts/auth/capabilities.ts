import { authError } from '../../http/errors.js';
import type { Principal } from './principal.js';

export type Capability = 'read' | 'write' | 'delete';

/**
 * The contract's capability matrix over apk_permission. Not monotonic: 2 is write-only.
 *   1: read | 2: write | 3: read, write | 4+: read, write, delete
 * The matrix starts at 1: a key below it (0 or negative, however it was made) has no capability at all,
 * where "read unless 2" alone would let it read.
 */
export function hasCapability(permission: number, capability: Capability): boolean {
  if (!(permission >= 1)) return false;
  switch (capability) {
    case 'read':
      return permission !== 2;
    case 'write':
      return permission >= 2;
    case 'delete':
      return permission >= 4;
  }
}

/** Throws 403 AuthenticationError unless the principal holds the capability (null means no check). */
export function requireCapability(principal: Principal, capability: Capability | null): void {
  if (capability === null) return;
  if (!hasCapability(principal.capability, capability)) {
    throw authError(403, `Insufficient permission: this key cannot ${capability}`);
  }
}
