import { consumeCeremony } from '../../accounts/passkeys/ceremonies.js';
import { passkeyByCredentialId } from '../../accounts/passkeys/credentials.js';
import { firstRefusal } from '../../accounts/passkeys/vetoes.js';
import { authError, businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { verifyAssertion } from './assertion.js';
import { BROWSER_ONLY, CREDENTIAL_INPUT, relyingParty } from './shared.js';

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
  async run({ input, db, clock, settings, web, log, recordFailedAuth, passkeyVetoes }) {
    const refuse = async () => {
      await recordFailedAuth();
      return authError(401, 'Passkey sign-in failed');
    };
    const ceremony = await consumeCeremony(db, clock, web.sessionId, 'login');
    if (ceremony.kind !== 'ok') throw await refuse();
    const passkey = await passkeyByCredentialId(db, input.id);
    if (!passkey) throw await refuse();
    if (!(await verifyAssertion({ db, clock, log }, input, ceremony.challenge, passkey, relyingParty(web, settings)))) throw await refuse();
    // The holder of the passkey is proven; a consumer may still want a second factor (a vault's owner signs
    // in with the password).
    const veto = await firstRefusal(passkeyVetoes.signIn, db, { userId: passkey.userId, passkeyId: passkey.id });
    if (veto) throw businessError(veto.message, { reason: veto.reason });
    await db.updateTable('usr_users').set({ usr_lastlogin_time: clock.now() }).where('usr_user_id', '=', passkey.userId).execute();
    web.signInAfterSuccess(passkey.userId);
    return { data: { user_id: passkey.userId }, message: 'Signed in with your passkey.', redirect: '/' };
  },
});
