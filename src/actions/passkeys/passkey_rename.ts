import { passkeyOfUser, passkeySummary, renamePasskey } from '../../accounts/passkeys/credentials.js';
import { businessError, validationError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY } from './shared.js';

/** Renames one of the caller's own passkeys; anyone else's is not found. */
export default defineAction({
  name: 'passkey_rename',
  description: 'Rename one of your passkeys',
  auth: BROWSER_ONLY,
  mutates: true,
  input: { passkey_id: { type: 'int', required: true, min: 1 }, label: { type: 'string', required: true, min: 1, max_length: 100 } },
  async run({ input, user: me, db, clock }) {
    const label = input.label.trim();
    if (label === '') throw validationError({ label: 'must not be blank' });
    const passkey = await passkeyOfUser(db, me.usr_user_id, input.passkey_id);
    if (!passkey) throw businessError('No such passkey', { reason: 'not_found' });
    await renamePasskey(db, passkey.id, label, clock.now());
    return { data: { passkey: passkeySummary({ ...passkey, label }) }, message: 'Passkey renamed.' };
  },
});
