import { defineAction } from '../define.js';
import { sharesOf } from '../../drive/sharing.js';

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
  drive_item: { need: 'owner', of: 'file_or_folder' },
  async run({ db, clock, item }) {
    return { data: { ...(await sharesOf(db, item, clock.now())) } };
  },
});
