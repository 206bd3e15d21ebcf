import { STAFF_PERMISSION } from '../tiers/gating.js';

/** An account as the authority rule sees it: who it is and its role (usr_permission). */
export interface Account {
  usr_user_id: number;
  usr_permission: number;
}

/**
 * Whether `actor` may act on `target`'s account: its API keys, its sign-in (login-as), its tier
 * membership, its user row. Anyone may act on their own account; on another's only staff may, and never
 * on an account with more permission than their own. Without the ceiling a staff member could borrow a
 * superadmin's authority: a key owned by a superadmin passes the management gates, and a superadmin's
 * email, once changed, resets its password.
 */
export function mayActOn(actor: Account, target: Account): boolean {
  if (actor.usr_user_id === target.usr_user_id) return true;
  return actor.usr_permission >= STAFF_PERMISSION && actor.usr_permission >= target.usr_permission;
}
