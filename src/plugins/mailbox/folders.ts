import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { ensureFolders, notFound } from './mailboxes.js';
import { mailboxDb } from './tables.js';

/** A mailbox's folder by role (inbox, sent, archive, trash) or by name, case-insensitively. */
export async function folderIdOf(db: Kysely<DB>, mailboxId: number, folder: string): Promise<number> {
  await ensureFolders(db, mailboxId);
  const key = folder.trim().toLowerCase();
  const row = await mailboxDb(db)
    .selectFrom('mbf_mailbox_folders')
    .select('mbf_mailbox_folder_id')
    .where('mbf_mbx_mailbox_id', '=', mailboxId)
    .where('mbf_delete_time', 'is', null)
    .where((eb) => eb.or([eb('mbf_role', '=', key as never), eb(eb.fn('lower', ['mbf_name']), '=', key)]))
    .executeTakeFirst();
  if (!row) throw notFound('folder');
  return row.mbf_mailbox_folder_id;
}
