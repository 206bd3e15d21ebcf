import { generateAuthenticationOptions } from '@simplewebauthn/server';
import { beginCeremony } from '../../accounts/passkeys/ceremonies.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, relyingParty, webOf } from './shared.js';

/** Begins passwordless sign-in: a challenge for any discoverable passkey of this site. */
export default defineAction({
  name: 'passkey_login_options',
  description: 'Begin passwordless sign-in with a passkey',
  requires_session: false,
  auth: BROWSER_ONLY,
  mutates: true,
  input: {},
  async run({ db, clock, settings, web }) {
    const w = webOf(web);
    const rp = relyingParty(w, settings);
    const options = await generateAuthenticationOptions({ rpID: rp.id, userVerification: 'preferred', timeout: 300_000 });
    await beginCeremony(db, clock, { webSessionId: w.sessionId, kind: 'login', challenge: options.challenge, userId: null });
    return { data: options as unknown as Record<string, unknown> };
  },
});
