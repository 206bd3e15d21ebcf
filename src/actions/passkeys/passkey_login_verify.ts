import { verifyAuthenticationResponse } from '@simplewebauthn/server';
import { consumeCeremony } from '../../accounts/passkeys/ceremonies.js';
import { passkeyByCredentialId, touchPasskey } from '../../accounts/passkeys/credentials.js';
import { authError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, CREDENTIAL_INPUT, authenticationResponse, relyingParty, webOf } from './shared.js';
import { checkSignCount } from './sign-count.js';

/**
 * Completes passkey sign-in and signs the browser session in, like /login. Every failure is one identical
 * 401 (no oracle for which credentials exist) and counts toward the failed-auth limit. Not run in one
 * transaction: the challenge is spent by its own statement whatever the verification decides.
 */
export default defineAction({
  name: 'passkey_login_verify',
  description: 'Complete passkey sign-in and start a browser session',
  requires_session: false,
  auth: BROWSER_ONLY,
  mutates: false,
  input: CREDENTIAL_INPUT,
  async run({ input, db, clock, settings, web, log, recordFailedAuth }) {
    const w = webOf(web);
    const refuse = async () => {
      await recordFailedAuth();
      return authError(401, 'Passkey sign-in failed');
    };
    const ceremony = await consumeCeremony(db, clock, w.sessionId, 'login');
    if (ceremony.kind !== 'ok') throw await refuse();
    const passkey = await passkeyByCredentialId(db, input.id);
    if (!passkey) throw await refuse();
    const rp = relyingParty(w, settings);
    let verification;
    try {
      verification = await verifyAuthenticationResponse({
        response: authenticationResponse(input),
        expectedChallenge: ceremony.challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        requireUserVerification: false,
        credential: { id: passkey.credentialId, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: passkey.signCount, transports: passkey.transports as never },
      });
    } catch {
      throw await refuse();
    }
    if (!verification.verified) throw await refuse();
    const newCount = verification.authenticationInfo.newCounter;
    checkSignCount(log, passkey, newCount);
    await touchPasskey(db, passkey.id, Math.max(newCount, passkey.signCount), clock.now());
    w.signInAfterSuccess(passkey.userId);
    return { data: { user_id: passkey.userId }, message: 'Signed in with your passkey.', redirect: '/' };
  },
});
