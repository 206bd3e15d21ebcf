import { memberBefore, recordMemberUpdated } from '../../accounts/member-events.js';
import { defineAction } from '../define.js';
import { CONTACT_CHANNELS } from './contact.js';

export default defineAction({
  name: 'contact_preferences',
  description: 'Update the channels the signed-in user may be contacted through',
  mutates: true,
  input: {
    // Absent (an HTML form with nothing ticked) means no channel.
    contact_preferences: { type: 'array', items: { type: 'string', options: CONTACT_CHANNELS }, max: CONTACT_CHANNELS.length },
  },
  async run({ input, user: me, db, clock }) {
    const channels = CONTACT_CHANNELS.filter((c) => (input.contact_preferences ?? []).includes(c));
    const now = clock.now();
    const before = await memberBefore(db, me.usr_user_id);
    await db
      .updateTable('usr_users')
      .set({ usr_contact_preferences: channels.join(','), usr_contact_preference_last_changed: now, usr_update_time: now })
      .where('usr_user_id', '=', me.usr_user_id)
      .execute();
    await recordMemberUpdated(db, clock, me.usr_user_id, before);
    return { data: { contact_preferences: channels, changed_time: now }, message: 'Your contact preferences have been saved.' };
  },
});
