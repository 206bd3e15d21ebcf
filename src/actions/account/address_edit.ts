import type { Selectable } from 'kysely';
import { businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { field } from '../form.js';
import { contactDb, type UsersAddrsTable } from './contact-tables.js';

function exportAddress(a: Selectable<UsersAddrsTable>) {
  return {
    address_id: a.usa_users_addr_id,
    address1: a.usa_address1,
    address2: a.usa_address2,
    city: a.usa_city,
    state: a.usa_state,
    zip: a.usa_zip_code_id,
    country_code_id: a.usa_cco_country_code_id,
    is_default: a.usa_is_default === true,
  };
}

/**
 * Edits one of the user's addresses: the one named by usa_users_addr_id, else the default one, created when the
 * user has none. Making an address the default clears the flag on the others.
 */
export default defineAction({
  name: 'address_edit',
  description: 'Update an address of the signed-in user',
  mutates: true,
  input: {
    usa_users_addr_id: { type: 'int', min: 1 },
    usa_address1: { type: 'string', required: true, max_length: 128 },
    usa_address2: { type: 'string', max_length: 64 },
    usa_city: { type: 'string', required: true, max_length: 64 },
    usa_state: { type: 'string', max_length: 32 },
    usa_zip_code_id: { type: 'string', max_length: 10 },
    usa_cco_country_code_id: { type: 'int', min: 1, max: 32767 },
    usa_is_default: { type: 'bool' },
  },
  async run({ input, user: me, db: baseDb, clock }) {
    const db = contactDb(baseDb);
    const now = clock.now();
    const mine = db.selectFrom('usa_users_addrs').selectAll().where('usa_usr_user_id', '=', me.usr_user_id).where('usa_delete_time', 'is', null);
    const existing = input.usa_users_addr_id
      ? await mine.where('usa_users_addr_id', '=', input.usa_users_addr_id).executeTakeFirst()
      : await mine.orderBy('usa_is_default', (ob) => ob.desc().nullsLast()).orderBy('usa_users_addr_id').executeTakeFirst();
    if (input.usa_users_addr_id && !existing) throw businessError('No such address on this account', { reason: 'address_not_found' });
    const isDefault = input.usa_is_default ?? (existing ? existing.usa_is_default === true : true);
    const values = {
      usa_address1: input.usa_address1,
      usa_address2: input.usa_address2 || null,
      usa_city: input.usa_city,
      usa_state: input.usa_state || null,
      usa_zip_code_id: input.usa_zip_code_id || null,
      usa_cco_country_code_id: input.usa_cco_country_code_id ?? existing?.usa_cco_country_code_id ?? null,
      usa_is_default: isDefault,
      usa_update_time: now,
    };
    const saved = existing
      ? await db.updateTable('usa_users_addrs').set(values).where('usa_users_addr_id', '=', existing.usa_users_addr_id).returningAll().executeTakeFirstOrThrow()
      : await db.insertInto('usa_users_addrs').values({ ...values, usa_usr_user_id: me.usr_user_id, usa_create_time: now }).returningAll().executeTakeFirstOrThrow();
    if (isDefault) {
      await db
        .updateTable('usa_users_addrs')
        .set({ usa_is_default: false, usa_update_time: now })
        .where('usa_usr_user_id', '=', me.usr_user_id)
        .where('usa_users_addr_id', '!=', saved.usa_users_addr_id)
        .where('usa_is_default', '=', true)
        .execute();
    }
    return { data: { address: exportAddress(saved), created: !existing }, message: 'Your address has been saved.' };
  },
  form: async ({ user, db: baseDb }) => {
    const a = user
      ? await contactDb(baseDb)
          .selectFrom('usa_users_addrs')
          .selectAll()
          .where('usa_usr_user_id', '=', user.usr_user_id)
          .where('usa_delete_time', 'is', null)
          .orderBy('usa_is_default', (ob) => ob.desc().nullsLast())
          .orderBy('usa_users_addr_id')
          .executeTakeFirst()
      : undefined;
    return {
      submit_label: 'Save address',
      fields: [
        field.hidden('usa_users_addr_id', a?.usa_users_addr_id ?? null),
        field.text('usa_address1', 'Address', { value: a?.usa_address1 ?? '', required: true, maxlength: 128 }),
        field.text('usa_address2', 'Address line 2', { value: a?.usa_address2 ?? '', maxlength: 64 }),
        field.text('usa_city', 'City', { value: a?.usa_city ?? '', required: true, maxlength: 64 }),
        field.text('usa_state', 'State or region', { value: a?.usa_state ?? '', maxlength: 32 }),
        field.text('usa_zip_code_id', 'Postal code', { value: a?.usa_zip_code_id ?? '', maxlength: 10 }),
        field.checkbox('usa_is_default', 'Use as my main address', { value: a ? a.usa_is_default === true : true }),
      ],
    };
  },
});
