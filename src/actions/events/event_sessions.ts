import { businessError, validationError } from '../../http/errors.js';
import { defineAction } from '../define.js';
import { field } from '../form.js';
import { formViewer } from '../../events/rules.js';
import { chosenSessionIds, eventSessions, formRegistration, isCourse, registrationForSessions, replaceSessionChoice } from '../../events/sessions.js';

const MAX_SESSIONS = 500;

/** Chooses which sessions of a multi-session event a registration attends; the choice replaces the previous one. */
export default defineAction({
  name: 'event_sessions',
  description: 'Choose the sessions of an event a registration attends',
  mutates: true,
  input: {
    evr_event_registrant_id: { type: 'int', required: true },
    evs_event_session_ids: { type: 'array', required: true, min: 1, max: MAX_SESSIONS, items: { type: 'int', min: 1 } },
  },
  async run(ctx) {
    const { input, db, clock } = ctx;
    const me = ctx.user;
    const reg = await registrationForSessions({ ...ctx, user: me }, input.evr_event_registrant_id);
    const { event } = reg;
    if (isCourse(event)) throw businessError(`${event.evt_name} is a course: its sessions are taken together (event_sessions_course)`);
    const sessions = await eventSessions(db, event.evt_event_id);
    if (sessions.length === 0) throw businessError(`${event.evt_name} has no sessions to choose`);
    const known = new Set(sessions.map((s) => s.session_id));
    const foreign = [...new Set(input.evs_event_session_ids)].filter((id) => !known.has(id));
    if (foreign.length > 0) {
      throw validationError({ evs_event_session_ids: `${foreign.join(', ')} ${foreign.length === 1 ? 'is not a session' : 'are not sessions'} of ${event.evt_name}` });
    }
    const wanted = new Set(input.evs_event_session_ids);
    await replaceSessionChoice(db, reg.evr_event_registrant_id, sessions.filter((s) => wanted.has(s.session_id)).map((s) => s.session_id), clock.now());
    return {
      data: { event_registrant_id: reg.evr_event_registrant_id, event_id: event.evt_event_id, session_ids: await chosenSessionIds(db, reg.evr_event_registrant_id) },
      message: `Your sessions of ${event.evt_name} are saved.`,
    };
  },
  form: async ({ user, query, db, clock, settings, caches }) => {
    const reg = await formRegistration({ db, clock, settings, caches, user: formViewer(user) }, query.evr_event_registrant_id);
    const sessions = await eventSessions(db, reg.event.evt_event_id);
    const chosen = await chosenSessionIds(db, reg.evr_event_registrant_id);
    return {
      submit_label: 'Save my sessions',
      fields: [
        field.hidden('evr_event_registrant_id', reg.evr_event_registrant_id),
        field.checkboxList(
          'evs_event_session_ids',
          `Sessions of ${reg.event.evt_name}`,
          sessions.map((s) => ({ value: String(s.session_id), label: s.title ?? `Session ${s.session_id}` })),
          { value: chosen.map(String), required: true },
        ),
      ],
    };
  },
});
