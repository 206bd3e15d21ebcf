import { defineAction } from '../define.js';
import { BROWSER_ONLY } from './shared.js';

/** Presence: keeps the window from closing for want of a heartbeat, never extends a cap. */
export default defineAction({
  name: 'vault_heartbeat',
  description: 'Keep the open window alive; returns {alive: false} once no window is open',
  auth: BROWSER_ONLY,
  mutates: false,
  input: {},
  async run({ user, db, web }) {
    return { data: { alive: await web.vault.heartbeat(db, user.usr_user_id) } };
  },
});
