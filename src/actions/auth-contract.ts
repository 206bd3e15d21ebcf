import type { Capability } from '../accounts/auth/capabilities.js';
import { hasCapability } from '../accounts/auth/capabilities.js';
import type { Principal } from '../accounts/auth/principal.js';
import { authError } from '../http/errors.js';

/** A descriptor's auth block: every field optional; absent fields fall back to the surface, then built-ins. */
export interface AuthContract {
  capability?: Capability | null;
  requires_session?: boolean;
  requires_machine_key?: boolean;
  requires_browser_session?: boolean;
  allow_guest?: boolean;
  session_write?: boolean;
  min_user_permission?: number;
}

export type ResolvedAuthContract = Required<AuthContract>;

/** The built-in defaults: the last step of resolution. */
export const BUILT_IN_AUTH: ResolvedAuthContract = {
  capability: null,
  requires_session: true,
  requires_machine_key: false,
  requires_browser_session: false,
  allow_guest: false,
  session_write: false,
  min_user_permission: 0,
};

/** Surface defaults named by the contract. */
export const SURFACE_AUTH_DEFAULTS = {
  action: { capability: 'write' },
  form: { capability: 'read' },
} as const satisfies Record<string, AuthContract>;

const FIELDS = Object.keys(BUILT_IN_AUTH) as Array<keyof AuthContract>;

/** Per field: the explicit value, then the surface default, then the built-in default. */
export function resolveAuthContract(explicit: AuthContract | undefined, surface: AuthContract): ResolvedAuthContract {
  const out = { ...BUILT_IN_AUTH } as Record<keyof AuthContract, unknown>;
  for (const field of FIELDS) {
    if (explicit && explicit[field] !== undefined) out[field] = explicit[field];
    else if (surface[field] !== undefined) out[field] = surface[field];
  }
  return out as ResolvedAuthContract;
}

/** Contradictions and ill-typed values in an auth block; a descriptor with any is refused at registration. */
export function authContractProblems(auth: AuthContract): string[] {
  const problems: string[] = [];
  if (auth.capability !== undefined && auth.capability !== null && !['read', 'write', 'delete'].includes(auth.capability)) {
    problems.push(`capability must be 'read', 'write', 'delete' or null`);
  }
  if (auth.min_user_permission !== undefined && (!Number.isInteger(auth.min_user_permission) || auth.min_user_permission < 0 || auth.min_user_permission > 10)) {
    problems.push('min_user_permission must be an integer from 0 to 10');
  }
  if (auth.requires_machine_key && auth.requires_browser_session) {
    problems.push('requires_machine_key and requires_browser_session are mutually exclusive');
  }
  if (auth.requires_machine_key && auth.allow_guest) {
    problems.push('allow_guest admits the anonymous browser principal, which requires_machine_key refuses');
  }
  // A sessionless action may still be for website visitors only (requires_browser_session: signed in or
  // not); it cannot require a machine key or a user permission.
  if (auth.requires_session === false && (auth.requires_machine_key || (auth.min_user_permission ?? 0) > 0)) {
    problems.push('a sessionless action takes no user credential, so it cannot require a machine key or a user permission');
  }
  return problems;
}

/** What the caller was admitted with; session_write matters only to website sessions (signed in or guest). */
export interface AuthDecision {
  principal: Principal;
  sessionWrite: boolean;
}

/** Applies a resolved contract to an authenticated principal, or throws the contract's 401/403. */
export function enforceAuthContract(principal: Principal, contract: ResolvedAuthContract): AuthDecision {
  const { credential } = principal;
  if (credential === 'guest' && !contract.allow_guest) throw authError(401, 'Sign in required');
  if (contract.requires_machine_key && credential !== 'machine') throw authError(403, 'This endpoint requires a machine key');
  if (contract.requires_browser_session && credential !== 'browser' && credential !== 'guest') {
    throw authError(403, 'This endpoint requires a browser session; API keys are refused');
  }
  // The anonymous principal carries no key, so there is no apk_permission to check.
  if (credential !== 'guest' && contract.capability !== null && !hasCapability(principal.capability, contract.capability)) {
    throw authError(403, `Insufficient permission: this key cannot ${contract.capability}`);
  }
  if (contract.min_user_permission > 0 && (principal.user?.usr_permission ?? 0) < contract.min_user_permission) {
    throw authError(403, 'Insufficient user permission');
  }
  return { principal, sessionWrite: contract.session_write && (credential === 'browser' || credential === 'guest') };
}
