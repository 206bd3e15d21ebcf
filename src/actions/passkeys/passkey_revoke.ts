import { passkeyOfUser, revokePasskey } from '../../accounts/passkeys/credentials.js';
import { firstRefusal } from '../../accounts/passkeys/vetoes.js';
import { retirePasskeyWraps } from '../../accounts/vault/vaults.js';
import { businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY } from './shared.js';

/**
 * Revokes one of the caller's own passkeys, unless a consumer's veto (the vault's unlocker floor) refuses
 * it. Like enrolment it needs a recent passkey step-up and is refused under login-as; the passkey's wraps
 * of the vault key are destroyed with it.
 */
export default defineAction({
  name: 'passkey_revoke',
  description: 'Revoke one of your passkeys; needs a recent step-up',
  auth: BROWSER_ONLY,
  mutates: true,
  input: { passkey_id: { type: 'int', required: true, min: 1 } },
  login_as: 'Passkeys cannot be revoked',
  step_up: 'passkey',
  async run({ input, user: me, db, clock, passkeyVetoes }) {
    const passkey = await passkeyOfUser(db, me.usr_user_id, input.passkey_id);
    if (!passkey) throw businessError('No such passkey', { reason: 'not_found' });
    const veto = await firstRefusal(passkeyVetoes.revoke, db, { userId: me.usr_user_id, passkeyId: passkey.id });
    if (veto) throw businessError(veto.message, { reason: veto.reason });
    await revokePasskey(db, passkey.id, clock.now());
    await retirePasskeyWraps(db, passkey.id, clock.now());
    return { data: { revoked: true, passkey_id: passkey.id }, message: 'Passkey removed.' };
  },
});
