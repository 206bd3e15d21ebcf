import { businessError, validationError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { field } from '../form.js';
import { isStaff, loadEvent } from '../../events/rules.js';
import { workflowTables } from '../../events/tables.js';
import { promoteFromWaitingList } from '../../events/waiting-list.js';

/**
 * Withdraws a registration (soft delete): the registrant themself, or staff. The freed place goes to the
 * first person on the waiting list, in the same transaction.
 */
export default defineAction({
  name: 'event_withdraw',
  description: 'Withdraw a registration from an event',
  mutates: true,
  input: {
    evr_event_registrant_id: { type: 'int', required: true },
    confirm: { type: 'bool', required: true },
  },
  async run(ctx) {
    const { input, db, clock } = ctx;
    const me = ctx.user;
    if (input.confirm !== true) throw validationError({ confirm: 'must be true to withdraw' }, 'Confirm the withdrawal');
    const now = clock.now();
    const w = workflowTables(db);
    const found = await w
      .selectFrom('evr_event_registrants')
      .select(['evr_event_registrant_id', 'evr_evt_event_id', 'evr_usr_user_id'])
      .where('evr_event_registrant_id', '=', input.evr_event_registrant_id)
      .where('evr_delete_time', 'is', null)
      .executeTakeFirst();
    // Someone else's registration answers like a missing one: registrations of others stay unseen.
    if (!found || (found.evr_usr_user_id !== me.usr_user_id && !isStaff(me))) {
      throw businessError('No such registration of yours', { evr_event_registrant_id: input.evr_event_registrant_id });
    }
    // Lock the event first (as event_register does), then re-read the registration under the lock.
    const event = (await loadEvent(db, found.evr_evt_event_id, true))!;
    const withdrawn = await w
      .updateTable('evr_event_registrants')
      .set({ evr_delete_time: now, evr_update_time: now })
      .where('evr_event_registrant_id', '=', found.evr_event_registrant_id)
      .where('evr_delete_time', 'is', null)
      .returning('evr_event_registrant_id')
      .executeTakeFirst();
    if (!withdrawn) throw businessError('No such registration of yours', { evr_event_registrant_id: input.evr_event_registrant_id });
    const promoted = event.evt_delete_time === null ? await promoteFromWaitingList(db, event, now, ctx.mail) : null;
    return {
      data: { event_registrant_id: found.evr_event_registrant_id, event_id: event.evt_event_id, withdrawn: true, promoted_user_id: promoted?.user_id ?? null },
      message: `The registration for ${event.evt_name} is withdrawn.`,
    };
  },
  form: ({ query }) => ({
    submit_label: 'Withdraw',
    fields: [
      field.hidden('evr_event_registrant_id', /^\d{1,15}$/.test(query.evr_event_registrant_id ?? '') ? Number(query.evr_event_registrant_id) : null),
      field.checkbox('confirm', 'Yes, withdraw my registration', { required: true }),
    ],
  }),
});
