import type { FastifyRequest } from 'fastify';
import { BUILT_IN_AUTH, resolveAuthContract, enforceAuthContract, type AuthContract, type AuthDecision } from '../../actions/auth-contract.js';
import type { Action } from '../../actions/define.js';
import { actionRegistry } from '../../actions/index.js';
import { actionError } from '../../http/errors.js';
import { CSRF_HEADER } from '../../http/transport.js';
import type { Services } from '../../services.js';

/** The action a name resolves to, or the contract's 404 (unknown, inactive plugin, or no descriptor). */
export function findAction(services: Services, name: string): Action {
  const found = actionRegistry.resolve(name, services.plugins);
  if (found.kind === 'action') return found.action;
  if (found.kind === 'undescribed') {
    throw actionError(404, `Action '${name}' is not published: it has no API descriptor`, { action: name, missing: 'descriptor' });
  }
  throw actionError(404, `Unknown action '${name}'`, { action: name });
}

/** 403 ActionError naming the setting while an action's requires_setting is falsy; asked before authentication. */
export function requireSetting(services: Services, action: Action): void {
  const setting = action.descriptor.requires_setting;
  if (setting !== null && !services.settings.get(setting)) {
    throw actionError(403, `Action '${action.name}' is not available: setting ${setting} is off`, { setting });
  }
}

/** Whether discovery lists the action now. */
export function isPublished(services: Services, action: Action): boolean {
  const setting = action.descriptor.requires_setting;
  return setting === null || Boolean(services.settings.get(setting));
}

/**
 * A website page calling through serviceApi: the session cookie and the CSRF header, and no key headers.
 * A request without the CSRF header (a plain form post, an app) is not one.
 */
function isBrowserCall(request: FastifyRequest): boolean {
  const h = request.headers;
  return h.public_key === undefined && h.secret_key === undefined && h[CSRF_HEADER] !== undefined && request.hasWebSessionCookie();
}

/**
 * Sessionless actions run without any credential; the rest authenticate (once per request) and must pass
 * the action's contract resolved against this surface's defaults. A sessionless action called from a
 * website page is admitted with the page's session (signed in or guest, its CSRF proof checked), so that
 * it may act on that session: registration signs the new member in (`ctx.web`); other callers stay keyless.
 */
export async function admit(request: FastifyRequest, action: Action, surfaceDefaults: AuthContract): Promise<AuthDecision | null> {
  if (!action.descriptor.requires_session) {
    if (!action.descriptor.auth.requires_browser_session) {
      // A page left open past its session's end calls as a keyless visitor would, not as a signed-out one.
      if (!isBrowserCall(request) || !(await request.webSession())) return null;
    }
    // A sessionless action for website visitors (passkey sign-in): no user is needed, but the request must
    // be a browser session, signed in or not, with its CSRF proof; API keys are refused.
    const principal = await request.authenticate();
    return enforceAuthContract(principal, { ...BUILT_IN_AUTH, requires_browser_session: true, allow_guest: true, session_write: action.descriptor.auth.session_write ?? false });
  }
  const principal = await request.authenticate();
  return enforceAuthContract(principal, resolveAuthContract(action.descriptor.auth, surfaceDefaults));
}

export function wrongMethod(expected: 'POST' | 'GET') {
  return async (request: FastifyRequest): Promise<never> => {
    throw actionError(405, `Method ${request.method} not allowed here; use ${expected}`, { allowed: expected });
  };
}

export function queryOf(request: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((request.query ?? {}) as Record<string, unknown>)) {
    if (typeof v === 'string') out[k] = v;
    else if (Array.isArray(v) && typeof v[0] === 'string') out[k] = v[0];
  }
  return out;
}
