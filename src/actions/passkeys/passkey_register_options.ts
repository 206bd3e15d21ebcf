import { webauthn } from '../../accounts/passkeys/webauthn.js';
import { verifySecret } from '../../accounts/passwords.js';
import { CEREMONY_TTL_MS, beginCeremony } from '../../accounts/passkeys/ceremonies.js';
import { passkeysOf } from '../../accounts/passkeys/credentials.js';
import { SUPPORTED_ALGORITHMS, USER_VERIFICATION, userHandleOf } from '../../accounts/passkeys/relying-party.js';
import { validationError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, relyingParty, requireRecentPasskeyStepUp } from './shared.js';

/**
 * Begins enrolling a passkey. The first one needs the account password; once the user has one, a passkey
 * step-up within passkey_stepup_window_seconds. Registration always asks for the PRF extension, so the
 * vault can later use the passkey as an unlocker.
 */
export default defineAction({
  name: 'passkey_register_options',
  description: 'Begin enrolling a passkey (the first needs current_password, later ones a recent step-up)',
  auth: BROWSER_ONLY,
  mutates: true,
  input: { current_password: { type: 'password', max_length: 255 } },
  login_as: 'Passkeys cannot be enrolled',
  async run({ input, user: me, db, clock, settings, session, web, recordFailedAuth }) {
    const existing = await passkeysOf(db, me.usr_user_id);
    if (existing.length === 0) {
      if (!input.current_password) throw validationError({ current_password: 'is required to enroll your first passkey' });
      const row = await db.selectFrom('usr_users').select('usr_password').where('usr_user_id', '=', me.usr_user_id).executeTakeFirstOrThrow();
      if (!row.usr_password || !(await verifySecret(row.usr_password, input.current_password))) {
        await recordFailedAuth();
        throw validationError({ current_password: 'is incorrect' });
      }
    } else {
      requireRecentPasskeyStepUp({ session, clock, settings }, me.usr_user_id);
    }
    const rp = relyingParty(web, settings);
    const options = await (await webauthn()).generateRegistrationOptions({
      rpName: rp.name,
      rpID: rp.id,
      userName: me.usr_email,
      userDisplayName: [me.usr_first_name, me.usr_last_name].filter(Boolean).join(' ') || me.usr_email,
      userID: userHandleOf(me.usr_user_id),
      attestationType: 'none',
      timeout: CEREMONY_TTL_MS,
      excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: USER_VERIFICATION },
      supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
      extensions: { prf: {} } as never,
    });
    await beginCeremony(db, clock, { webSessionId: web.sessionId, kind: 'register', challenge: options.challenge, userId: me.usr_user_id });
    return { data: options as unknown as Record<string, unknown> };
  },
});
