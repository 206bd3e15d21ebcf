import { businessError } from '../../http/errors.js';
import { formatTimestamp } from '../../lib/time.js';
import { defineAction } from '../define.js';
import { field } from '../form.js';
import { closedReason, isFull, liveRegistrantCount, liveRegistration, visibleEvent } from '../../events/rules.js';
import { isUniqueViolation } from '../../db/errors.js';
import { workflowTables } from '../../events/tables.js';

/** Joins the waiting list of a full event that keeps one; once per user (a unique index has the last word). */
export default defineAction({
  name: 'event_waiting_list',
  description: 'Join the waiting list of a full event',
  mutates: true,
  input: {
    evt_event_id: { type: 'int', required: true, min: 1 },
  },
  async run(ctx) {
    const { input, db, clock } = ctx;
    const me = ctx.user;
    const now = clock.now();
    const event = await visibleEvent({ ...ctx, user: me }, input.evt_event_id, true);
    if (event.evt_allow_waiting_list !== true) throw businessError(`${event.evt_name} has no waiting list`);
    const closed = closedReason(event, now);
    if (closed) throw businessError(closed);
    if (await liveRegistration(db, event.evt_event_id, me.usr_user_id)) throw businessError(`You are already registered for ${event.evt_name}`);
    const w = workflowTables(db);
    const alreadyMessage = `You are already on the waiting list for ${event.evt_name}`;
    const onList = await w
      .selectFrom('ewl_waiting_lists')
      .select('ewl_waiting_list_id')
      .where('ewl_evt_event_id', '=', event.evt_event_id)
      .where('ewl_usr_user_id', '=', me.usr_user_id)
      .where('ewl_delete_time', 'is', null)
      .executeTakeFirst();
    if (onList) throw businessError(alreadyMessage);
    if (!isFull(event, await liveRegistrantCount(db, event.evt_event_id))) {
      throw businessError(`${event.evt_name} still has places: register instead of joining the waiting list`);
    }
    const row = await w
      .insertInto('ewl_waiting_lists')
      .values({ ewl_evt_event_id: event.evt_event_id, ewl_usr_user_id: me.usr_user_id, ewl_create_time: now, ewl_update_time: now })
      .returning(['ewl_waiting_list_id', 'ewl_create_time'])
      .executeTakeFirstOrThrow()
      .catch((e: unknown) => {
        if (isUniqueViolation(e)) throw businessError(alreadyMessage);
        throw e;
      });
    const ahead = await w
      .selectFrom('ewl_waiting_lists')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('ewl_evt_event_id', '=', event.evt_event_id)
      .where('ewl_delete_time', 'is', null)
      .where('ewl_waiting_list_id', '<', row.ewl_waiting_list_id)
      .executeTakeFirstOrThrow();
    return {
      data: { waiting_list_id: row.ewl_waiting_list_id, event_id: event.evt_event_id, position: Number(ahead.n) + 1, joined_time: formatTimestamp(row.ewl_create_time) },
      message: `You are on the waiting list for ${event.evt_name}.`,
    };
  },
  form: ({ query }) => ({
    submit_label: 'Join the waiting list',
    fields: [field.hidden('evt_event_id', /^\d{1,15}$/.test(query.evt_event_id ?? '') ? Number(query.evt_event_id) : null)],
  }),
});
