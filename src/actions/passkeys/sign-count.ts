import type { StoredPasskey } from '../../accounts/passkeys/credentials.js';
import type { ActionLog } from '../define.js';

/**
 * A counter that does not grow may mean a cloned authenticator, but synced passkeys always report 0, so a
 * regression is logged for the operator, never refused (DESIGN 10).
 */
export function checkSignCount(log: ActionLog, passkey: StoredPasskey, newCount: number): void {
  if ((newCount > 0 || passkey.signCount > 0) && newCount <= passkey.signCount) {
    log.warn({ passkey_id: passkey.id, user_id: passkey.userId, stored_sign_count: passkey.signCount, presented_sign_count: newCount }, 'passkey sign count did not increase');
  }
}
