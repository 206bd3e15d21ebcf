import { webauthn } from '../../accounts/passkeys/webauthn.js';
import { CEREMONY_TTL_MS, beginCeremony } from '../../accounts/passkeys/ceremonies.js';
import { USER_VERIFICATION } from '../../accounts/passkeys/relying-party.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, relyingParty } from './shared.js';

/** Begins passwordless sign-in: a challenge for any discoverable passkey of this site. */
export default defineAction({
  name: 'passkey_login_options',
  description: 'Begin passwordless sign-in with a passkey',
  requires_session: false,
  auth: BROWSER_ONLY,
  mutates: true,
  input: {},
  async run({ db, clock, settings, web }) {
    const rp = relyingParty(web, settings);
    const options = await (await webauthn()).generateAuthenticationOptions({ rpID: rp.id, userVerification: USER_VERIFICATION, timeout: CEREMONY_TTL_MS });
    await beginCeremony(db, clock, { webSessionId: web.sessionId, kind: 'login', challenge: options.challenge, userId: null });
    return { data: options as unknown as Record<string, unknown> };
  },
});
