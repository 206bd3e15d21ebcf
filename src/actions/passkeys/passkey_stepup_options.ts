import { webauthn } from '../../accounts/passkeys/webauthn.js';
import { CEREMONY_TTL_MS, beginCeremony } from '../../accounts/passkeys/ceremonies.js';
import { USER_VERIFICATION } from '../../accounts/passkeys/relying-party.js';
import { passkeysOf } from '../../accounts/passkeys/credentials.js';
import { businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, relyingParty } from './shared.js';

/** Begins a step-up: the signed-in user confirms presence with one of their own passkeys. */
export default defineAction({
  name: 'passkey_stepup_options',
  description: 'Begin a passkey step-up confirmation',
  auth: BROWSER_ONLY,
  mutates: true,
  input: {},
  async run({ user: me, db, clock, settings, web }) {
    const own = await passkeysOf(db, me.usr_user_id);
    if (own.length === 0) throw businessError('You have no passkey to confirm with', { reason: 'no_passkeys' });
    const rp = relyingParty(web, settings);
    const options = await (await webauthn()).generateAuthenticationOptions({
      rpID: rp.id,
      userVerification: USER_VERIFICATION,
      timeout: CEREMONY_TTL_MS,
      allowCredentials: own.map((p) => ({ id: p.credentialId, transports: p.transports })),
    });
    await beginCeremony(db, clock, { webSessionId: web.sessionId, kind: 'stepup', challenge: options.challenge, userId: me.usr_user_id });
    return { data: options as unknown as Record<string, unknown> };
  },
});
