import type { Kysely } from 'kysely';
import { vaultOf } from '../../accounts/vault/vaults.js';
import type { DB } from '../../db/types.js';
import { businessError } from '../../http/errors.js';

/** Another user's mailbox, thread or message answers as one that does not exist (422, reason not_found). */
export const notFound = (what: string) => businessError(`That ${what} does not exist`, { reason: 'not_found' });
import type { Settings } from '../../settings/store.js';
import { mailboxDb, type FolderRole, type SecurityLevel } from './tables.js';

/** A live mailbox as the plugin's code uses it. */
export interface Mailbox {
  id: number;
  ownerUserId: number;
  address: string;
  level: SecurityLevel;
  isDefault: boolean;
  createTime: Date;
}

const DEFAULT_FOLDERS: ReadonlyArray<{ name: string; role: FolderRole }> = [
  { name: 'Inbox', role: 'inbox' },
  { name: 'Sent', role: 'sent' },
  { name: 'Archive', role: 'archive' },
  { name: 'Trash', role: 'trash' },
];

function toMailbox(row: { mbx_mailbox_id: number; mbx_usr_user_id: number; mbx_address: string; mbx_security_level: SecurityLevel; mbx_is_default: boolean; mbx_create_time: Date }): Mailbox {
  return {
    id: row.mbx_mailbox_id,
    ownerUserId: row.mbx_usr_user_id,
    address: row.mbx_address,
    level: row.mbx_security_level,
    isDefault: row.mbx_is_default,
    createTime: row.mbx_create_time,
  };
}

const COLUMNS = ['mbx_mailbox_id', 'mbx_usr_user_id', 'mbx_address', 'mbx_security_level', 'mbx_is_default', 'mbx_create_time'] as const;

export async function mailboxesOf(db: Kysely<DB>, userId: number): Promise<Mailbox[]> {
  const rows = await mailboxDb(db)
    .selectFrom('mbx_mailboxes')
    .select(COLUMNS)
    .where('mbx_usr_user_id', '=', userId)
    .where('mbx_delete_time', 'is', null)
    .orderBy('mbx_is_default', 'desc')
    .orderBy('mbx_mailbox_id')
    .execute();
  return rows.map(toMailbox);
}

export async function mailboxByAddress(db: Kysely<DB>, address: string): Promise<Mailbox | null> {
  const row = await mailboxDb(db)
    .selectFrom('mbx_mailboxes')
    .select(COLUMNS)
    .where((eb) => eb(eb.fn('lower', ['mbx_address']), '=', address.trim().toLowerCase()))
    .where('mbx_delete_time', 'is', null)
    .executeTakeFirst();
  return row ? toMailbox(row) : null;
}

/** The caller's mailbox by id (or their default); another user's mailbox is not found, as is none. */
export async function ownMailbox(db: Kysely<DB>, userId: number, mailboxId: number | null | undefined): Promise<Mailbox> {
  const boxes = await mailboxesOf(db, userId);
  const box = mailboxId ? boxes.find((b) => b.id === mailboxId) : boxes[0];
  if (!box) throw notFound('mailbox');
  return box;
}

/** The default folders of a mailbox (created with it; made again if missing). */
export async function ensureFolders(db: Kysely<DB>, mailboxId: number): Promise<void> {
  const mdb = mailboxDb(db);
  const have = await mdb.selectFrom('mbf_mailbox_folders').select('mbf_role').where('mbf_mbx_mailbox_id', '=', mailboxId).where('mbf_delete_time', 'is', null).execute();
  const roles = new Set(have.map((r) => r.mbf_role));
  const missing = DEFAULT_FOLDERS.filter((f) => !roles.has(f.role));
  if (missing.length === 0) return;
  await mdb
    .insertInto('mbf_mailbox_folders')
    .values(missing.map((f) => ({ mbf_mbx_mailbox_id: mailboxId, mbf_name: f.name, mbf_role: f.role })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function folderOf(db: Kysely<DB>, mailboxId: number, role: FolderRole): Promise<number> {
  await ensureFolders(db, mailboxId);
  const row = await mailboxDb(db)
    .selectFrom('mbf_mailbox_folders')
    .select('mbf_mailbox_folder_id')
    .where('mbf_mbx_mailbox_id', '=', mailboxId)
    .where('mbf_role', '=', role)
    .where('mbf_delete_time', 'is', null)
    .executeTakeFirstOrThrow();
  return row.mbf_mailbox_folder_id;
}

/**
 * The member's mailboxes; their first call creates the default one (`standard`, address
 * `{user id}@{mailbox_domain}`). A concurrent first call loses the unique index quietly and reads the winner's.
 */
export async function provisionedMailboxes(db: Kysely<DB>, settings: Settings, userId: number, now: Date): Promise<Mailbox[]> {
  const boxes = await mailboxesOf(db, userId);
  if (boxes.length > 0) return boxes;
  const domain = settings.string('mailbox_domain').trim();
  if (!domain) throw businessError('Mailboxes are not set up yet: the mailbox_domain setting is empty');
  const inserted = await mailboxDb(db)
    .insertInto('mbx_mailboxes')
    .values({ mbx_usr_user_id: userId, mbx_address: `${userId}@${domain}`, mbx_security_level: 'standard', mbx_is_default: true, mbx_create_time: now, mbx_update_time: now })
    .onConflict((oc) => oc.doNothing())
    .returning('mbx_mailbox_id')
    .executeTakeFirst();
  if (inserted) await ensureFolders(db, inserted.mbx_mailbox_id);
  return mailboxesOf(db, userId);
}

/** Levels above `standard` seal content to the owner's vault: the owner must have one. */
export async function checkLevelAllowed(db: Kysely<DB>, ownerUserId: number, level: string): Promise<string | null> {
  if (level === 'standard') return null;
  return (await vaultOf(db, ownerUserId)) ? null : `a ${level} mailbox needs its owner to have a vault`;
}

/** The security levels of a user's live mailboxes (the vault's window caps follow the highest). */
export async function levelsOf(db: Kysely<DB>, userId: number): Promise<string[]> {
  return (await mailboxesOf(db, userId)).map((b) => b.level);
}
