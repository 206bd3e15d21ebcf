import { actingUser } from '../../../actions/account/user.js';
import { defineAction } from '../../../actions/define.js';
import { receiveRaw } from '../inbound.js';
import { notFound, ownMailbox } from '../mailboxes.js';
import { mboxMessages } from '../mbox.js';

/**
 * Imports an mbox archive uploaded through the mail_import_archive upload purpose (drive_upload_init with
 * purpose mail_import_archive, then drive_upload_complete's file id) into one of the caller's mailboxes:
 * read as a stream, each message parsed and stored (sealed per the mailbox's level), idempotent per
 * Message-ID, so importing the same archive again adds nothing.
 */
export default defineAction({
  name: 'mailbox/import',
  description: 'Import an mbox archive you uploaded with purpose mail_import_archive (file_id) into your mailbox (default: your first); idempotent per Message-ID',
  mutates: true,
  input: {
    file_id: { type: 'int', min: 1, required: true },
    mailbox_id: { type: 'int', min: 1 },
  },
  async run(ctx) {
    const { db, input, clock, settings } = ctx;
    const me = actingUser(ctx.user);
    const box = await ownMailbox(db, me.usr_user_id, input.mailbox_id);
    const file = await db
      .selectFrom('fil_files')
      .innerJoin('fbb_file_blobs', 'fbb_file_blob_id', 'fil_fbb_file_blob_id')
      .select(['fil_file_id', 'fil_name', 'fbb_storage_key'])
      .where('fil_file_id', '=', input.file_id)
      .where('fil_usr_user_id', '=', me.usr_user_id)
      .where('fil_source', '=', 'mail_import_archive')
      .where('fil_delete_time', 'is', null)
      .executeTakeFirst();
    if (!file) throw notFound('archive');
    const stream = await ctx.driveStorage.blobs.get(file.fbb_storage_key);
    const now = clock.now();
    const counts = { imported: 0, duplicates: 0, skipped: 0 };
    for await (const raw of mboxMessages(stream, settings.int('mailbox_smtp_max_message_bytes'))) {
      if (raw === null || raw.length === 0) {
        counts.skipped++;
        continue;
      }
      const stored = await receiveRaw(db, box, raw, { via: 'import', detail: `From the archive ${file.fil_name ?? file.fil_file_id}` }, now);
      if (stored.duplicate) counts.duplicates++;
      else counts.imported++;
    }
    return { data: { mailbox_id: box.id, file_id: file.fil_file_id, ...counts }, message: `Imported ${counts.imported} messages.` };
  },
});
