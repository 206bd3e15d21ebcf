import { webauthn } from '../../accounts/passkeys/webauthn.js';
import { consumeCeremony } from '../../accounts/passkeys/ceremonies.js';
import { insertPasskey, passkeysOf, passkeySummary } from '../../accounts/passkeys/credentials.js';
import { SUPPORTED_ALGORITHMS } from '../../accounts/passkeys/relying-party.js';
import { businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, CREDENTIAL_INPUT, ceremonyRefusal, prfEnabled, registrationResponse, relyingParty } from './shared.js';

/** Completes enrollment: verifies the attestation (format none) against this session's challenge and stores the credential. */
export default defineAction({
  name: 'passkey_register_verify',
  description: 'Complete passkey enrollment',
  auth: BROWSER_ONLY,
  mutates: false,
  input: { ...CREDENTIAL_INPUT, label: { type: 'string', max_length: 100 } },
  async run({ input, user: me, db, clock, settings, web }) {
    const ceremony = await consumeCeremony(db, clock, web.sessionId, 'register');
    if (ceremony.kind !== 'ok') throw ceremonyRefusal(ceremony.kind);
    if (ceremony.userId !== me.usr_user_id) throw ceremonyRefusal('missing');
    const rp = relyingParty(web, settings);
    let verification;
    try {
      verification = await (await webauthn()).verifyRegistrationResponse({
        response: registrationResponse(input),
        expectedChallenge: ceremony.challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        requireUserVerification: true,
        supportedAlgorithmIDs: SUPPORTED_ALGORITHMS,
      });
    } catch (e) {
      throw businessError(`The passkey could not be verified: ${(e as Error).message}`, { reason: 'verification_failed' });
    }
    if (!verification.verified || !verification.registrationInfo) throw businessError('The passkey could not be verified', { reason: 'verification_failed' });
    const { credential, aaguid, credentialBackedUp } = verification.registrationInfo;
    const label = input.label?.trim() || `Passkey ${(await passkeysOf(db, me.usr_user_id)).length + 1}`;
    try {
      const stored = await insertPasskey(db, {
        userId: me.usr_user_id,
        label,
        credentialId: credential.id,
        publicKey: Buffer.from(credential.publicKey).toString('base64url'),
        signCount: credential.counter,
        transports: credential.transports ?? [],
        aaguid,
        backedUp: credentialBackedUp,
        prfCapable: prfEnabled(input.clientExtensionResults),
        now: clock.now(),
      });
      return { data: { passkey: passkeySummary(stored) }, message: 'Passkey added.' };
    } catch (e) {
      if (/unique|duplicate/i.test(String((e as Error).message))) {
        throw businessError('This passkey is already enrolled', { reason: 'already_registered' });
      }
      throw e;
    }
  },
});
