import { businessError } from '../../http/errors.js';
import { formatTimestamp } from '../../lib/time.js';
import { defineAction } from '../define.js';
import { field } from '../form.js';
import { closedReason, eventProduct, eventVisibleTo, formViewer, isFull, liveRegistrantCount, liveRegistration, loadEvent, openEvents, viewerGate, visibleEvent } from '../../events/rules.js';
import { isUniqueViolation } from '../../db/errors.js';
import { workflowTables } from '../../events/tables.js';

/**
 * Registers the acting user for a free event. The event row is locked for the transaction, so the
 * count of places and the insert are one decision: concurrent registrations never exceed
 * evt_max_signups. A second live registration of the same user is refused by a unique index.
 */
export default defineAction({
  name: 'event_register',
  description: 'Register the signed-in user for an event',
  mutates: true,
  input: {
    evt_event_id: { type: 'int', required: true, min: 1 },
  },
  async run(ctx) {
    const { input, db, clock } = ctx;
    const me = ctx.user;
    const now = clock.now();
    const event = await visibleEvent({ ...ctx, user: me }, input.evt_event_id, true);
    const closed = closedReason(event, now);
    if (closed) throw businessError(closed);
    if (await liveRegistration(db, event.evt_event_id, me.usr_user_id)) throw businessError(`You are already registered for ${event.evt_name}`);
    if (isFull(event, await liveRegistrantCount(db, event.evt_event_id))) {
      const hint = event.evt_allow_waiting_list === true ? '; you may join its waiting list' : '';
      throw businessError(`${event.evt_name} is full${hint}`, { waiting_list: event.evt_allow_waiting_list === true });
    }
    const product = await eventProduct(db, event.evt_event_id);
    if (product) {
      throw businessError(`${event.evt_name} is a paid event: buy "${product.pro_name}" through the store to register`, {
        product_id: product.pro_product_id,
        product_name: product.pro_name,
      });
    }
    const row = await workflowTables(db)
      .insertInto('evr_event_registrants')
      .values({ evr_evt_event_id: event.evt_event_id, evr_usr_user_id: me.usr_user_id, evr_create_time: now, evr_update_time: now })
      .returning(['evr_event_registrant_id', 'evr_create_time'])
      .executeTakeFirstOrThrow()
      .catch((e: unknown) => {
        if (isUniqueViolation(e)) throw businessError(`You are already registered for ${event.evt_name}`);
        throw e;
      });
    // A place taken directly ends the user's wait for one.
    await workflowTables(db)
      .updateTable('ewl_waiting_lists')
      .set({ ewl_delete_time: now, ewl_update_time: now })
      .where('ewl_evt_event_id', '=', event.evt_event_id)
      .where('ewl_usr_user_id', '=', me.usr_user_id)
      .where('ewl_delete_time', 'is', null)
      .execute();
    return {
      data: {
        event_registrant_id: row.evr_event_registrant_id,
        event_id: event.evt_event_id,
        event_name: event.evt_name,
        registered_time: formatTimestamp(row.evr_create_time),
      },
      message: `You are registered for ${event.evt_name}.`,
    };
  },
  // With ?evt_event_id= the form is for that event; without, the user picks among the open events they may see.
  form: async ({ user, query, db, clock, settings, caches }) => {
    const gate = viewerGate({ db, clock, settings, caches }, formViewer(user) ?? { usr_user_id: 0, usr_permission: 0 });
    const now = clock.now();
    if (query.evt_event_id !== undefined) {
      const id = /^\d{1,15}$/.test(query.evt_event_id) ? Number(query.evt_event_id) : null;
      const event = id === null ? undefined : await loadEvent(db, id);
      if (!event || !(await eventVisibleTo(gate, event))) throw businessError('That event is not available', { evt_event_id: query.evt_event_id });
      return { submit_label: `Register for ${event.evt_name}`, fields: [field.hidden('evt_event_id', event.evt_event_id)] };
    }
    const open = [];
    for (const event of await openEvents(db, now)) {
      if (await eventVisibleTo(gate, event)) open.push({ value: String(event.evt_event_id), label: event.evt_name });
    }
    return { submit_label: 'Register', fields: [field.drop('evt_event_id', 'Event', open, { required: true })] };
  },
});
