import type { PrincipalUser } from '../../accounts/auth/principal.js';
import { authError } from '../../http/errors.js';

/** The acting user of a sessioned action; the dispatcher guarantees one, this narrows the type. */
export function actingUser(user: PrincipalUser | null): PrincipalUser {
  if (!user) throw authError(401, 'Sign in required');
  return user;
}
