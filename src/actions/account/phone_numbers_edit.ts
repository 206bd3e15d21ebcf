import type { Selectable } from 'kysely';
import { businessError, validationError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { contactDb, type PhoneNumbersTable } from './contact-tables.js';

// Digits with the usual separators and an optional leading +; at least five digits.
const PHONE_RE = /^\+?[0-9 ().\-/]{5,30}$/;

function exportPhone(p: Selectable<PhoneNumbersTable>) {
  return {
    phone_number_id: p.phn_phone_number_id,
    phone_number: p.phn_phone_number,
    country_code_id: p.phn_cco_country_code_id,
    is_private: p.phn_is_private === true,
    is_verified: p.phn_is_verified === true,
    is_default: p.phn_is_default === true,
  };
}

/**
 * Adds a phone number (no phn_phone_number_id), or changes or removes (remove: true) the one named by
 * phn_phone_number_id. The first number becomes the default. The default number is mirrored in usr_phn_phone_number_id. A changed
 * number is no longer verified.
 */
export default defineAction({
  name: 'phone_numbers_edit',
  description: 'Update the phone numbers of the signed-in user',
  mutates: true,
  input: {
    phn_phone_number_id: { type: 'int', min: 1 },
    phn_phone_number: { type: 'string', max_length: 30 },
    phn_cco_country_code_id: { type: 'int', min: 1, max: 2147483647 },
    phn_is_private: { type: 'bool' },
    phn_is_default: { type: 'bool' },
    remove: { type: 'bool' },
  },
  async run({ input, user: me, db: baseDb, clock }) {
    const db = contactDb(baseDb);
    const now = clock.now();
    const mine = db.selectFrom('phn_phone_numbers').selectAll().where('phn_usr_user_id', '=', me.usr_user_id).where('phn_delete_time', 'is', null);
    const existing = input.phn_phone_number_id ? await mine.where('phn_phone_number_id', '=', input.phn_phone_number_id).executeTakeFirst() : undefined;
    if (input.phn_phone_number_id && !existing) throw businessError('No such phone number on this account', { reason: 'phone_number_not_found' });

    if (input.remove) {
      if (!existing) throw validationError({ phn_phone_number_id: 'is required to remove a number' });
      await db.updateTable('phn_phone_numbers').set({ phn_delete_time: now, phn_is_default: false, phn_update_time: now }).where('phn_phone_number_id', '=', existing.phn_phone_number_id).execute();
      await db.updateTable('usr_users').set({ usr_phn_phone_number_id: null }).where('usr_user_id', '=', me.usr_user_id).where('usr_phn_phone_number_id', '=', existing.phn_phone_number_id).execute();
      const left = await mine.orderBy('phn_phone_number_id').execute();
      return { data: { removed: existing.phn_phone_number_id, phone_numbers: left.map(exportPhone) }, message: 'The phone number has been removed.' };
    }

    const number = input.phn_phone_number ?? existing?.phn_phone_number;
    if (!number) throw validationError({ phn_phone_number: 'is required' });
    if (!PHONE_RE.test(number) || number.replace(/\D/g, '').length < 5) throw validationError({ phn_phone_number: 'must be a phone number' });
    const hasDefault = (await mine.where('phn_is_default', '=', true).executeTakeFirst()) !== undefined;
    const isDefault = input.phn_is_default ?? (existing ? existing.phn_is_default === true : !hasDefault);
    const values = {
      phn_phone_number: number,
      phn_cco_country_code_id: input.phn_cco_country_code_id ?? existing?.phn_cco_country_code_id ?? 1,
      phn_is_private: input.phn_is_private ?? existing?.phn_is_private ?? false,
      phn_is_verified: existing?.phn_phone_number === number ? existing.phn_is_verified === true : false,
      phn_is_default: isDefault,
      phn_update_time: now,
    };
    const saved = existing
      ? await db.updateTable('phn_phone_numbers').set(values).where('phn_phone_number_id', '=', existing.phn_phone_number_id).returningAll().executeTakeFirstOrThrow()
      : await db.insertInto('phn_phone_numbers').values({ ...values, phn_usr_user_id: me.usr_user_id, phn_create_time: now }).returningAll().executeTakeFirstOrThrow();
    if (isDefault) {
      await db
        .updateTable('phn_phone_numbers')
        .set({ phn_is_default: false, phn_update_time: now })
        .where('phn_usr_user_id', '=', me.usr_user_id)
        .where('phn_phone_number_id', '!=', saved.phn_phone_number_id)
        .where('phn_is_default', '=', true)
        .execute();
      await db.updateTable('usr_users').set({ usr_phn_phone_number_id: saved.phn_phone_number_id }).where('usr_user_id', '=', me.usr_user_id).execute();
    }
    const all = await mine.orderBy('phn_phone_number_id').execute();
    return { data: { phone_number: exportPhone(saved), phone_numbers: all.map(exportPhone) }, message: 'Your phone numbers have been saved.' };
  },
});
