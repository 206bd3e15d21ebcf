import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { relyingPartyOf, type RelyingParty } from '../../accounts/passkeys/relying-party.js';
import { hasRecentStepUp } from '../../accounts/passkeys/step-up.js';
import type { Clock } from '../../lib/clock.js';
import { authError, businessError } from '../../http/errors.js';
import type { Settings } from '../../settings/store.js';
import type { WebContext } from '../define.js';
import type { InputSchema } from '../input.js';

/** Every passkey action is for website sessions only: API keys get 403 AuthenticationError. */
export const BROWSER_ONLY = { requires_browser_session: true } as const;

/**
 * The fields of the JSON that @simplewebauthn/browser's startRegistration/startAuthentication return,
 * sent as the body's top-level fields.
 */
export const CREDENTIAL_INPUT = {
  id: { type: 'string', required: true, max_length: 1024 },
  rawId: { type: 'string', required: true, max_length: 1024 },
  type: { type: 'string', required: true, options: ['public-key'] },
  response: { type: 'object', required: true },
  clientExtensionResults: { type: 'object' },
  authenticatorAttachment: { type: 'string', max_length: 32 },
} as const satisfies InputSchema;

export type CredentialInput = {
  id: string;
  rawId: string;
  type: 'public-key';
  response: Record<string, unknown>;
  clientExtensionResults?: Record<string, unknown> | null;
  authenticatorAttachment?: string | null;
};

function common(input: CredentialInput) {
  return {
    id: input.id,
    rawId: input.rawId,
    type: input.type,
    clientExtensionResults: (input.clientExtensionResults ?? {}) as RegistrationResponseJSON['clientExtensionResults'],
    ...(input.authenticatorAttachment ? { authenticatorAttachment: input.authenticatorAttachment as 'platform' | 'cross-platform' } : {}),
  };
}

export function registrationResponse(input: CredentialInput): RegistrationResponseJSON {
  return { ...common(input), response: input.response as unknown as RegistrationResponseJSON['response'] };
}

export function authenticationResponse(input: CredentialInput): AuthenticationResponseJSON {
  return { ...common(input), response: input.response as unknown as AuthenticationResponseJSON['response'] };
}

/** The relying party of this site, from BASE_URL. */
export function relyingParty(web: WebContext, settings: Settings): RelyingParty {
  return relyingPartyOf(web.baseUrl, String(settings.get('site_name') ?? ''));
}

/** The website session an admitted passkey action runs in; the dispatcher guarantees one. */
export function webOf(web: WebContext | null): WebContext {
  if (!web) throw authError(403, 'This action requires a browser session; API keys are refused');
  return web;
}

/** A ceremony that could not be completed: the challenge was never issued, is spent, or is older than 5 minutes. */
export function ceremonyRefusal(kind: 'missing' | 'expired') {
  return kind === 'expired'
    ? businessError('The passkey request expired; start again', { reason: 'challenge_expired' })
    : businessError('No passkey request is pending for this session; start again', { reason: 'no_ceremony' });
}

/** Whether the credential says it evaluated the PRF extension (WebAuthn's prf.enabled at creation). */
export function prfEnabled(results: unknown): boolean {
  const prf = (results as { prf?: { enabled?: unknown } } | null)?.prf;
  return prf?.enabled === true;
}

/**
 * A staff member signed in as a member (login-as) must not change the member's credentials: 422
 * ActionError login_as. `what` completes "… cannot be … while signed in on behalf of a member".
 */
export function refuseLoginAs(principal: { loginAsBy?: unknown } | null, what: string): void {
  if (principal?.loginAsBy) throw businessError(`${what} while signed in on behalf of a member`, { reason: 'login_as' });
}

/** A passkey step-up within passkey_stepup_window_seconds, or 422 ActionError stepup_required. */
export function requireRecentPasskeyStepUp(ctx: { session: Record<string, unknown> | null; clock: Clock; settings: Settings }, userId: number): void {
  if (!hasRecentStepUp(ctx.session, userId, ctx.clock, ctx.settings.int('passkey_stepup_window_seconds'))) {
    throw businessError('Confirm with one of your passkeys first', { reason: 'stepup_required' });
  }
}
