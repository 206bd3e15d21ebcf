import { recordChange } from '../../drive/changes.js';
import { DRIVE_SOURCE } from '../../drive/files.js';
import { defineAction } from '../define.js';
import { lockOwner, notFound } from '../../drive/tree.js';

/** Revokes a public link to a file of the caller's: from now on the link answers 404. */
export default defineAction({
  name: 'drive_link_revoke',
  description: 'Revoke a public share link (link_id) to one of your Drive files',
  requires_setting: 'drive_active',
  mutates: true,
  input: {
    link_id: { type: 'int', required: true, min: 1 },
  },
  async run({ input, user: me, db, clock }) {
    const link = await db
      .selectFrom('fsl_file_share_links')
      .innerJoin('fil_files', 'fil_file_id', 'fsl_fil_file_id')
      .select(['fsl_file_share_link_id', 'fsl_fil_file_id'])
      .where('fsl_file_share_link_id', '=', input.link_id)
      .where('fil_usr_user_id', '=', me.usr_user_id)
      .where('fil_source', '=', DRIVE_SOURCE)
      .where('fil_delete_time', 'is', null)
      .where('fsl_revoked_time', 'is', null)
      .where('fsl_delete_time', 'is', null)
      .executeTakeFirst();
    if (!link) throw notFound('link');
    await lockOwner(db, me.usr_user_id);
    const now = clock.now();
    await db.updateTable('fsl_file_share_links').set({ fsl_revoked_time: now, fsl_update_time: now }).where('fsl_file_share_link_id', '=', link.fsl_file_share_link_id).execute();
    await recordChange(db, { ownerUserId: me.usr_user_id, fileId: link.fsl_fil_file_id, kind: 'share', time: now });
    return { data: { link_id: link.fsl_file_share_link_id, revoked: true }, message: 'The link no longer works.' };
  },
});
