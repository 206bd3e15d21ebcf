import type { Readable } from 'node:stream';
import type { Capability } from '../../accounts/auth/capabilities.js';
import type { Principal } from '../../accounts/auth/principal.js';
import type { Services } from '../../services.js';

/**
 * The part of the authorization contract a management handler may set. Management's surface default
 * (requires_machine_key true, min_user_permission 10, no apk_permission check) is enforced before the
 * handler is even resolved; a handler can only add to it: a higher user floor, or a capability check.
 * Loosening fields (requires_machine_key false, requires_browser_session, allow_guest, session_write)
 * are refused when the handler is defined.
 */
export interface ManagementAuth {
  requires_machine_key?: true;
  min_user_permission?: number;
  capability?: Capability | null;
}

/** The effective contract of a management endpoint. */
export interface EffectiveManagementAuth {
  requires_machine_key: true;
  min_user_permission: number;
  capability: Capability | null;
}

export const MANAGEMENT_DEFAULT_AUTH: Readonly<EffectiveManagementAuth> = Object.freeze({
  requires_machine_key: true,
  min_user_permission: 10,
  capability: null,
});

/** What a handler is given: the contract's request array. Credential headers are never passed on. */
export interface ManagementRequest {
  method: 'GET';
  /** The endpoint path below /management, e.g. 'errors/recent'; '' for the root. */
  path: string;
  query: Record<string, unknown>;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

export interface StreamOptions {
  contentType: string;
  size?: number;
  /** Offered to the client in Content-Disposition. */
  filename?: string;
}

export interface ManagementContext {
  services: Services;
  principal: Principal;
  /** Every management endpoint, for the root listing. */
  endpoints: readonly ManagementHandler[];
  /** Sends `body` as the whole response, with no envelope; the handler then returns null. */
  stream(body: Readable, opts: StreamOptions): void;
}

/**
 * One management endpoint, declared as data (the file lives at handlers/{path}.ts). handle returns the
 * success envelope's data, or null after calling ctx.stream.
 */
export interface ManagementHandler {
  method: 'GET';
  path: string;
  description: string;
  auth?: ManagementAuth;
  /** The query parameters it reads, for the API document (name to type and meaning). */
  query?: Record<string, { type: 'string' | 'integer'; description: string; required?: boolean }>;
  /** Set when the answer is a byte stream of this content type instead of the envelope. */
  streams?: string;
  handle(req: ManagementRequest, ctx: ManagementContext): Promise<Record<string, unknown> | null>;
}

export class ManagementDefinitionError extends Error {}

const ALLOWED_AUTH_FIELDS = new Set(['requires_machine_key', 'min_user_permission', 'capability']);
const CAPABILITIES = new Set(['read', 'write', 'delete']);

/** Checks a handler's auth block only tightens the surface default, and returns the handler. */
export function defineManagementHandler(handler: ManagementHandler): ManagementHandler {
  const where = `management handler '${handler.path}'`;
  if (handler.method !== 'GET') throw new ManagementDefinitionError(`${where}: management is read-only; method must be GET`);
  if (!/^([a-z0-9_]+(\/[a-z0-9_]+)*)?$/.test(handler.path)) throw new ManagementDefinitionError(`${where}: path must be lower-case segments joined by '/'`);
  const auth = (handler.auth ?? {}) as Record<string, unknown>;
  for (const field of Object.keys(auth)) {
    if (!ALLOWED_AUTH_FIELDS.has(field)) throw new ManagementDefinitionError(`${where}: auth.${field} cannot be set on management (it could only loosen the default)`);
  }
  if ('requires_machine_key' in auth && auth.requires_machine_key !== true) {
    throw new ManagementDefinitionError(`${where}: auth.requires_machine_key may not be loosened`);
  }
  if ('min_user_permission' in auth) {
    const floor = auth.min_user_permission;
    if (typeof floor !== 'number' || !Number.isInteger(floor) || floor < MANAGEMENT_DEFAULT_AUTH.min_user_permission) {
      throw new ManagementDefinitionError(`${where}: auth.min_user_permission must be an integer of at least ${MANAGEMENT_DEFAULT_AUTH.min_user_permission}`);
    }
  }
  if ('capability' in auth && auth.capability !== null && !CAPABILITIES.has(String(auth.capability))) {
    throw new ManagementDefinitionError(`${where}: auth.capability must be 'read', 'write', 'delete' or null`);
  }
  return Object.freeze(handler);
}

export function effectiveAuth(handler: ManagementHandler): EffectiveManagementAuth {
  return {
    requires_machine_key: true,
    min_user_permission: handler.auth?.min_user_permission ?? MANAGEMENT_DEFAULT_AUTH.min_user_permission,
    capability: handler.auth?.capability ?? MANAGEMENT_DEFAULT_AUTH.capability,
  };
}
