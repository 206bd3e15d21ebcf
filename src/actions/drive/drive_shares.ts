import { actingUser } from '../account/user.js';
import { defineAction } from '../define.js';
import { sharesOf } from '../../drive/sharing.js';
import { resolveItem, targetOf } from '../../drive/tree.js';

/** The owner's view of who a file or folder is shared with (and, for a file, its working public links). */
export default defineAction({
  name: 'drive_shares',
  description: 'Who a Drive file (file_id) or folder (folder_id) of yours is shared with: grants {user_id: role}',
  requires_setting: 'drive_active',
  mutates: false,
  input: {
    file_id: { type: 'int', min: 1 },
    folder_id: { type: 'int', min: 1 },
  },
  async run({ input, user, db, clock }) {
    const me = actingUser(user);
    const item = await resolveItem(db, me.usr_user_id, targetOf(input), 'owner');
    return { data: { ...(await sharesOf(db, item, clock.now())) } };
  },
});
