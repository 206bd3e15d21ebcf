import { actingUser } from '../../../actions/account/user.js';
import { defineAction } from '../../../actions/define.js';
import { validationError } from '../../../http/errors.js';
import { folderIdOf } from '../folders.js';
import { mailboxesOf } from '../mailboxes.js';
import { mailboxDb } from '../tables.js';
import { ownThread } from '../views.js';

const ACTIONS = ['read', 'unread', 'star', 'unstar', 'label', 'unlabel', 'move', 'delete'] as const;

/**
 * Metadata changes on one of the caller's threads: mark read or unread, star, label, move to a folder,
 * delete. None touches sealed content, so each works while the vault is locked.
 */
export default defineAction({
  name: 'mailbox/thread_action',
  description: 'Change a thread of yours: action read, unread, star, unstar, label or unlabel (with label), move (with folder) or delete; works while your vault is locked',
  mutates: true,
  input: {
    thread_id: { type: 'int', min: 1, required: true },
    action: { type: 'string', required: true, options: ACTIONS },
    label: { type: 'string', min: 1, max_length: 64 },
    folder: { type: 'string', min: 1, max_length: 64 },
  },
  async run(ctx) {
    const { db, input, clock } = ctx;
    const { box, meta } = await ownThread(db, await mailboxesOf(db, actingUser(ctx.user).usr_user_id), input.thread_id);
    const mdb = mailboxDb(db);
    const now = clock.now();
    const id = meta.thread_id;
    const label = input.label?.trim() ?? '';
    if ((input.action === 'label' || input.action === 'unlabel') && !label) throw validationError({ label: 'required for label and unlabel' });
    if (input.action === 'move' && !input.folder) throw validationError({ folder: 'required for move' });
    switch (input.action) {
      case 'read':
      case 'unread':
        await mdb.updateTable('mbm_mailbox_messages').set({ mbm_is_read: input.action === 'read' }).where('mbm_mbt_mailbox_thread_id', '=', id).execute();
        break;
      case 'star':
      case 'unstar':
        await mdb.updateTable('mbt_mailbox_threads').set({ mbt_is_starred: input.action === 'star', mbt_update_time: now }).where('mbt_mailbox_thread_id', '=', id).execute();
        break;
      case 'label': {
        await mdb.insertInto('mbl_mailbox_labels').values({ mbl_mbx_mailbox_id: box.id, mbl_name: label }).onConflict((oc) => oc.doNothing()).execute();
        const row = await mdb
          .selectFrom('mbl_mailbox_labels')
          .select('mbl_mailbox_label_id')
          .where('mbl_mbx_mailbox_id', '=', box.id)
          .where((eb) => eb(eb.fn('lower', ['mbl_name']), '=', label.toLowerCase()))
          .executeTakeFirstOrThrow();
        await mdb.insertInto('mtl_mailbox_thread_labels').values({ mtl_mbt_mailbox_thread_id: id, mtl_mbl_mailbox_label_id: row.mbl_mailbox_label_id }).onConflict((oc) => oc.doNothing()).execute();
        break;
      }
      case 'unlabel':
        await mdb
          .deleteFrom('mtl_mailbox_thread_labels')
          .where('mtl_mbt_mailbox_thread_id', '=', id)
          .where('mtl_mbl_mailbox_label_id', 'in', (eb) =>
            eb
              .selectFrom('mbl_mailbox_labels')
              .select('mbl_mailbox_label_id')
              .where('mbl_mbx_mailbox_id', '=', box.id)
              .where((e) => e(e.fn('lower', ['mbl_name']), '=', label.toLowerCase())),
          )
          .execute();
        break;
      case 'move':
        await mdb.updateTable('mbt_mailbox_threads').set({ mbt_mbf_mailbox_folder_id: await folderIdOf(db, box.id, input.folder!), mbt_update_time: now }).where('mbt_mailbox_thread_id', '=', id).execute();
        break;
      case 'delete':
        await mdb.updateTable('mbt_mailbox_threads').set({ mbt_delete_time: now, mbt_update_time: now }).where('mbt_mailbox_thread_id', '=', id).execute();
        return { data: { thread_id: id, deleted: true }, message: 'Thread deleted.' };
    }
    const { meta: after } = await ownThread(db, [box], id);
    return { data: { thread: after, deleted: false } };
  },
});
