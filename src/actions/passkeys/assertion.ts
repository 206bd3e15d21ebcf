import { webauthn } from '../../accounts/passkeys/webauthn.js';
import { touchPasskey, type StoredPasskey } from '../../accounts/passkeys/credentials.js';
import { userHandleOf, type RelyingParty } from '../../accounts/passkeys/relying-party.js';
import type { Clock } from '../../lib/clock.js';
import type { ActionContext } from '../define.js';
import { authenticationResponse, type CredentialInput } from './shared.js';
import { checkSignCount } from './sign-count.js';

/**
 * Verifies an assertion (sign-in or step-up) for a stored passkey against the ceremony's challenge, and on
 * success records the use (sign count, last-used time). Any failure is a plain false: callers answer
 * every one alike.
 */
export async function verifyAssertion(
  ctx: { db: ActionContext['db']; clock: Clock; log: ActionContext['log'] },
  input: CredentialInput,
  challenge: string,
  passkey: StoredPasskey,
  rp: RelyingParty,
): Promise<boolean> {
  const response = authenticationResponse(input);
  // A discoverable credential returns its user handle: it must be the one enrolled for the passkey's owner.
  const handle = response.response.userHandle;
  if (handle && handle !== Buffer.from(userHandleOf(passkey.userId)).toString('base64url')) return false;
  let newCount: number;
  try {
    const result = await (await webauthn()).verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      // The library refuses a counter that did not grow; we log that instead (checkSignCount), so it is
      // given 0, which disables its check.
      credential: { id: passkey.credentialId, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: 0, transports: passkey.transports as never },
    });
    if (!result.verified) return false;
    newCount = result.authenticationInfo.newCounter;
  } catch {
    return false;
  }
  checkSignCount(ctx.log, passkey, newCount);
  await touchPasskey(ctx.db, passkey.id, Math.max(newCount, passkey.signCount), ctx.clock.now());
  return true;
}
