import { actingUser } from '../account/user.js';
import { defineAction } from '../define.js';
import { BROWSER_ONLY, webOf } from './shared.js';

/** Presence: keeps the window from closing for want of a heartbeat, never extends a cap. */
export default defineAction({
  name: 'vault_heartbeat',
  description: 'Keep the open window alive; returns {alive: false} once no window is open',
  auth: BROWSER_ONLY,
  mutates: false,
  input: {},
  async run({ user, db, web }) {
    const me = actingUser(user);
    return { data: { alive: await webOf(web).vault.heartbeat(db, me.usr_user_id) } };
  },
});
