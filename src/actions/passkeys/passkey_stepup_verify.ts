import { verifyAuthenticationResponse } from '@simplewebauthn/server';
import { consumeCeremony } from '../../accounts/passkeys/ceremonies.js';
import { passkeyByCredentialId, touchPasskey } from '../../accounts/passkeys/credentials.js';
import { markSteppedUp } from '../../accounts/passkeys/step-up.js';
import { businessError } from '../../http/errors.js';
import { formatTimestamp } from '../../lib/time.js';
import { actingUser } from '../account/user.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, CREDENTIAL_INPUT, authenticationResponse, ceremonyRefusal, relyingParty, webOf } from './shared.js';
import { checkSignCount } from './sign-count.js';

/** Completes a step-up: the session counts as recently re-verified for passkey_stepup_window_seconds. */
export default defineAction({
  name: 'passkey_stepup_verify',
  description: 'Complete a passkey step-up, marking the session recently re-verified',
  auth: { ...BROWSER_ONLY, session_write: true },
  mutates: false,
  input: CREDENTIAL_INPUT,
  async run({ input, user, db, clock, settings, session, web, log, recordFailedAuth }) {
    const me = actingUser(user);
    const w = webOf(web);
    const ceremony = await consumeCeremony(db, clock, w.sessionId, 'stepup');
    if (ceremony.kind !== 'ok') throw ceremonyRefusal(ceremony.kind);
    if (ceremony.userId !== me.usr_user_id) throw ceremonyRefusal('missing');
    const passkey = await passkeyByCredentialId(db, input.id);
    const refused = async () => {
      await recordFailedAuth();
      return businessError('The passkey could not be verified', { reason: 'verification_failed' });
    };
    if (!passkey || passkey.userId !== me.usr_user_id) throw await refused();
    const rp = relyingParty(w, settings);
    let verified = false;
    let newCount = 0;
    try {
      const result = await verifyAuthenticationResponse({
        response: authenticationResponse(input),
        expectedChallenge: ceremony.challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        requireUserVerification: false,
        credential: { id: passkey.credentialId, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: passkey.signCount, transports: passkey.transports as never },
      });
      verified = result.verified;
      newCount = result.authenticationInfo.newCounter;
    } catch {
      verified = false;
    }
    if (!verified) throw await refused();
    checkSignCount(log, passkey, newCount);
    await touchPasskey(db, passkey.id, Math.max(newCount, passkey.signCount), clock.now());
    markSteppedUp(session!, me.usr_user_id, clock);
    const until = new Date(clock.nowMs() + settings.int('passkey_stepup_window_seconds') * 1000);
    return { data: { stepped_up: true, stepup_expires_time: formatTimestamp(until) }, message: 'Confirmed.' };
  },
});
