import { actingUser } from '../../../actions/account/user.js';
import { defineAction } from '../../../actions/define.js';
import { ownMailbox } from '../mailboxes.js';
import { folderIdOf } from '../folders.js';
import { readerOf, threadSummaries } from '../views.js';

/**
 * A mailbox's threads, newest first. Metadata (ids, folder, labels, star, unread, counts, sizes, times)
 * always; sender, subject and snippet of the latest message, or `(locked)` with locked true.
 */
export default defineAction({
  name: 'mailbox/thread_list',
  description: 'List the threads of a mailbox (default: your first), optionally by folder (inbox, sent, archive, trash or a folder name), label or starred',
  mutates: false,
  auth: { capability: 'read' },
  input: {
    mailbox_id: { type: 'int', min: 1 },
    folder: { type: 'string', max_length: 64 },
    label: { type: 'string', max_length: 64 },
    starred: { type: 'bool' },
    limit: { type: 'int', min: 1, max: 100 },
    offset: { type: 'int', min: 0 },
  },
  async run(ctx) {
    const { input, db } = ctx;
    const box = await ownMailbox(db, actingUser(ctx.user).usr_user_id, input.mailbox_id);
    const folderId = input.folder ? await folderIdOf(db, box.id, input.folder) : null;
    const { threads, total, locked } = await threadSummaries(db, box, readerOf(ctx), {
      folderId,
      label: input.label ?? null,
      starred: input.starred ?? null,
      limit: input.limit ?? 50,
      offset: input.offset ?? 0,
    });
    const opened = box.level !== 'standard' && threads.some((x) => !x.locked);
    return { data: { mailbox_id: box.id, security_level: box.level, threads, total, locked }, ...(opened ? { sealedFor: [box.ownerUserId] } : {}) };
  },
});
