/** The WebAuthn relying party: its id is the public origin's host name, its origin the origin itself (BASE_URL). */
export interface RelyingParty {
  id: string;
  origin: string;
  name: string;
}

export function relyingPartyOf(baseUrl: string, siteName: string): RelyingParty {
  const url = new URL(baseUrl);
  return { id: url.hostname, origin: url.origin, name: siteName || 'Gatehouse' };
}

/** COSE algorithms we accept (DESIGN 10): ES256 and RS256. */
export const SUPPORTED_ALGORITHMS = [-7, -257];

/**
 * The WebAuthn user handle of an account: opaque bytes the authenticator stores with a discoverable
 * credential and returns on sign-in (no email or name in it).
 */
export function userHandleOf(userId: number): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(`gatehouse-user-${userId}`);
}

/**
 * A passkey is the whole sign-in, so the authenticator must verify the user (biometric, PIN or screen
 * lock), not just their presence: asked for in every ceremony and required when verifying.
 */
export const USER_VERIFICATION = 'required' as const;
