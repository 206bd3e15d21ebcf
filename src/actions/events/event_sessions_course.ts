import { businessError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { field } from '../form.js';
import { formViewer } from '../../events/rules.js';
import { chosenSessionIds, eventSessions, formRegistration, isCourse, registrationForSessions, replaceSessionChoice } from '../../events/sessions.js';

/** Enrols a registration of a course-type event in every one of its sessions. */
export default defineAction({
  name: 'event_sessions_course',
  description: 'Take every session of a course-type event',
  mutates: true,
  input: {
    evr_event_registrant_id: { type: 'int', required: true },
  },
  async run(ctx) {
    const { input, db, clock } = ctx;
    const me = ctx.user;
    const reg = await registrationForSessions({ ...ctx, user: me }, input.evr_event_registrant_id);
    const { event } = reg;
    if (!isCourse(event)) throw businessError(`${event.evt_name} is not a course: choose its sessions (event_sessions)`);
    const sessions = await eventSessions(db, event.evt_event_id);
    if (sessions.length === 0) throw businessError(`${event.evt_name} has no sessions yet`);
    await replaceSessionChoice(db, reg.evr_event_registrant_id, sessions.map((s) => s.session_id), clock.now());
    return {
      data: { event_registrant_id: reg.evr_event_registrant_id, event_id: event.evt_event_id, session_ids: await chosenSessionIds(db, reg.evr_event_registrant_id) },
      message: `You are enrolled in every session of ${event.evt_name}.`,
    };
  },
  form: async ({ user, query, db, clock, settings, caches }) => {
    const reg = await formRegistration({ db, clock, settings, caches, user: formViewer(user) }, query.evr_event_registrant_id);
    return { submit_label: `Take every session of ${reg.event.evt_name}`, fields: [field.hidden('evr_event_registrant_id', reg.evr_event_registrant_id)] };
  },
});
