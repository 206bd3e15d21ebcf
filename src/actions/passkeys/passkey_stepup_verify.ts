import { consumeCeremony } from '../../accounts/passkeys/ceremonies.js';
import { passkeyByCredentialId } from '../../accounts/passkeys/credentials.js';
import { markSteppedUp } from '../../accounts/passkeys/step-up.js';
import { businessError } from '../../http/errors.js';
import { formatTimestamp } from '../../lib/time.js';
import { defineAction } from '../define.js';
import { verifyAssertion } from './assertion.js';
import { BROWSER_ONLY, CREDENTIAL_INPUT, ceremonyRefusal, relyingParty } from './shared.js';

/** Completes a step-up: the session counts as recently re-verified for passkey_stepup_window_seconds. */
export default defineAction({
  name: 'passkey_stepup_verify',
  description: 'Complete a passkey step-up, marking the session recently re-verified',
  auth: { ...BROWSER_ONLY, session_write: true },
  mutates: false,
  input: CREDENTIAL_INPUT,
  async run({ input, user: me, db, clock, settings, session, web, log, recordFailedAuth }) {
    const ceremony = await consumeCeremony(db, clock, web.sessionId, 'stepup');
    if (ceremony.kind !== 'ok') throw ceremonyRefusal(ceremony.kind);
    if (ceremony.userId !== me.usr_user_id) throw ceremonyRefusal('missing');
    const passkey = await passkeyByCredentialId(db, input.id);
    const verified = passkey !== null && passkey.userId === me.usr_user_id && (await verifyAssertion({ db, clock, log }, input, ceremony.challenge, passkey, relyingParty(web, settings)));
    if (!verified) {
      await recordFailedAuth();
      throw businessError('The passkey could not be verified', { reason: 'verification_failed' });
    }
    markSteppedUp(session!, me.usr_user_id, clock);
    const until = new Date(clock.nowMs() + settings.int('passkey_stepup_window_seconds') * 1000);
    return { data: { stepped_up: true, stepup_expires_time: formatTimestamp(until) }, message: 'Confirmed.' };
  },
});
