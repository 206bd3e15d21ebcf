import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import { canEdit, fileAccess, folderAccess, type DriveRole } from './access.js';
import type { SealedReader } from '../accounts/vault/sealed.js';
import { loadDriveFile, openedSealedOwners, type DriveFile } from './files.js';
import { openFolderName } from './sealed-files.js';
import { lockOwnerQuota } from './quota.js';
import { businessError, validationError } from '../http/errors.js';
import { formatTimestamp } from '../lib/time.js';
import { TierFeatureReader, type FeatureRegistry } from '../tiers/index.js';
import type { UserTierCache } from '../tiers/features.js';
import { isUniqueViolation } from '../db/errors.js';

// What the Drive actions share: refusals, the file-or-folder target, the owner-or-grant check with the
// trash state of the folders above, the folder tree (ancestors, descendants) and the folder output.
//
// Trash: trashing a folder marks that folder only; everything below it is hidden with it (a grantee sees
// none of it, live listings skip it) and comes back when it is restored. An item is "in the trash" when it
// or any folder above it is trashed; outputs report that as is_trashed.

/** The refusal reasons the Drive actions give (422 ActionError, data.reason). */
export type DriveRefusal =
  | 'not_found'
  | 'forbidden'
  | 'name_taken'
  | 'cycle'
  | 'too_deep'
  | 'not_trashed'
  | 'links_unavailable'
  | 'quota_exceeded'
  | 'sealed'
  | 'vault_locked';

export function driveRefusal(reason: DriveRefusal, message: string, data: Record<string, unknown> = {}) {
  return businessError(message, { reason, ...data });
}

/** The one answer for an item that does not exist or that the caller may not see: no existence oracle. */
export const notFound = (what = 'file or folder') => driveRefusal('not_found', `That ${what} does not exist`);

/** Guards the recursive walks; moves keep every tree within drive_max_folder_depth, far below this. */
const MAX_WALK = 1000;

export interface ChainFolder {
  id: number;
  /** A sealed folder's name is not readable here: 'Sealed folder' (open it with openFolderName). */
  name: string;
  sealed: boolean;
  parentId: number | null;
  ownerUserId: number;
  isTrashed: boolean;
}

/** The live folder and every folder above it, nearest first; empty when the folder does not exist. */
export async function folderChain(db: Kysely<DB>, folderId: number): Promise<ChainFolder[]> {
  const { rows } = await sql<{ id: number; name: string | null; parent: number | null; owner: number; trashed: boolean; sealed: boolean }>`
    with recursive chain(id, name, parent, owner, trashed, sealed, depth) as (
      select fol_folder_id, fol_name, fol_fol_folder_id_parent, fol_usr_user_id, fol_is_trashed, fol_is_sealed, 1 from fol_folders
        where fol_folder_id = ${folderId} and fol_delete_time is null
      union all
      select f.fol_folder_id, f.fol_name, f.fol_fol_folder_id_parent, f.fol_usr_user_id, f.fol_is_trashed, f.fol_is_sealed, c.depth + 1
        from fol_folders f join chain c on f.fol_folder_id = c.parent
        where f.fol_delete_time is null and c.depth < ${MAX_WALK}
    )
    select id, name, parent, owner, trashed, sealed from chain order by depth`.execute(db);
  return rows.map((r) => ({
    id: Number(r.id),
    name: r.sealed ? SEALED_FOLDER_LABEL : (r.name ?? ''),
    sealed: Boolean(r.sealed),
    parentId: r.parent === null ? null : Number(r.parent),
    ownerUserId: Number(r.owner),
    isTrashed: r.trashed,
  }));
}

/** The live folder and every live folder below it, each with its distance below the folder (0: itself). */
export async function folderSubtree(db: Kysely<DB>, folderId: number): Promise<Array<{ id: number; depth: number }>> {
  const { rows } = await sql<{ id: number; depth: number }>`
    with recursive sub(id, depth) as (
      select fol_folder_id, 0 from fol_folders where fol_folder_id = ${folderId} and fol_delete_time is null
      union all
      select f.fol_folder_id, s.depth + 1 from fol_folders f join sub s on f.fol_fol_folder_id_parent = s.id
        where f.fol_delete_time is null and s.depth < ${MAX_WALK}
    )
    select id, depth from sub`.execute(db);
  return rows.map((r) => ({ id: Number(r.id), depth: Number(r.depth) }));
}

export type TargetKey = { kind: 'file'; id: number } | { kind: 'folder'; id: number };

/** The `file_id` or `folder_id` of an action's input: exactly one of them. */
export function targetOf(input: { file_id?: number | null; folder_id?: number | null }): TargetKey {
  const file = input.file_id ?? null;
  const folder = input.folder_id ?? null;
  if ((file === null) === (folder === null)) {
    throw validationError({ file_id: 'give either file_id or folder_id', folder_id: 'give either file_id or folder_id' });
  }
  return file !== null ? { kind: 'file', id: file } : { kind: 'folder', id: folder! };
}

/** A file or folder as the caller may reach it. */
export interface DriveItem {
  kind: 'file' | 'folder';
  id: number;
  name: string;
  ownerUserId: number;
  /** The folder holding it; null at its owner's root. */
  parentId: number | null;
  role: DriveRole;
  /** Trashed itself. */
  selfTrashed: boolean;
  /** Trashed itself or inside a trashed folder. */
  inTrash: boolean;
  /** The folders above it, nearest first. */
  ancestors: ChainFolder[];
  /** A sealed file, or a sealed folder (DESIGN 10): its files' names and bytes are sealed. */
  sealed: boolean;
}

/** What the caller must be able to do: see it, change it (owner or editor), or administer it (owner). */
export type DriveNeed = 'read' | 'edit' | 'owner';

const FORBIDDEN: Record<Exclude<DriveNeed, 'read'>, string> = {
  edit: 'You can only view this item',
  owner: 'Only the owner can do that',
};

/**
 * Resolves a target for the caller: not_found when it does not exist for them (no grant, or in the trash
 * and not theirs), forbidden when they may see it but not do what is asked.
 */
export async function resolveItem(db: Kysely<DB>, userId: number, target: TargetKey, need: DriveNeed): Promise<DriveItem> {
  const access = target.kind === 'file' ? await fileAccess(db, userId, target.id) : await folderAccess(db, userId, target.id);
  if (!access) throw notFound(target.kind);
  const row =
    target.kind === 'file'
      ? await db
          .selectFrom('fil_files')
          .select((eb) => ['fil_name as name', 'fil_fol_folder_id as parent', eb('fil_sealed_key', 'is not', null).as('sealed')])
          .where('fil_file_id', '=', target.id)
          .executeTakeFirstOrThrow()
      : await db.selectFrom('fol_folders').select(['fol_name as name', 'fol_fol_folder_id_parent as parent', 'fol_is_sealed as sealed']).where('fol_folder_id', '=', target.id).executeTakeFirstOrThrow();
  const ancestors = row.parent === null ? [] : await folderChain(db, row.parent);
  const inTrash = access.isTrashed || ancestors.some((f) => f.isTrashed);
  if (access.role !== 'owner' && inTrash) throw notFound(target.kind);
  if (need === 'edit' && !canEdit(access.role)) throw driveRefusal('forbidden', FORBIDDEN.edit);
  if (need === 'owner' && access.role !== 'owner') throw driveRefusal('forbidden', FORBIDDEN.owner);
  return {
    kind: target.kind,
    id: target.id,
    // A sealed file's or folder's name is not readable here: messages call it by what it is.
    name: row.sealed ? (target.kind === 'folder' ? SEALED_FOLDER_LABEL : 'Sealed file') : (row.name ?? ''),
    ownerUserId: access.ownerUserId,
    parentId: row.parent,
    role: access.role,
    selfTrashed: access.isTrashed,
    inTrash,
    ancestors,
    sealed: Boolean(row.sealed),
  };
}

/** A folder as actions return it (DESIGN 9). */
export interface DriveFolder {
  folder_id: number;
  /** Null for a sealed folder whose name the reader cannot open now (content_locked true). */
  name: string | null;
  parent_id: number | null;
  /** Present (true) on sealed folders only: its own name, and the names, MIME types and bytes of files in it, are sealed under the owner's vault (DESIGN 10). */
  sealed?: true;
  /** Present on sealed folders: true while the reader cannot open its name. */
  content_locked?: boolean;
  create_time: string;
  update_time: string;
}

export function selectFolders(db: Kysely<DB>) {
  return db
    .selectFrom('fol_folders')
    .select(['fol_folder_id', 'fol_usr_user_id', 'fol_name', 'fol_fol_folder_id_parent', 'fol_is_sealed', 'fol_sealed_key', 'fol_sealed_name', 'fol_create_time', 'fol_update_time'])
    .where('fol_delete_time', 'is', null);
}

type FolderRow = Awaited<ReturnType<ReturnType<typeof selectFolders>['executeTakeFirstOrThrow']>>;

/** The folder as the reader sees it: a sealed folder's name opened only through the owner's open window. */
export async function toDriveFolder(row: FolderRow, reader: SealedReader | null): Promise<DriveFolder> {
  const opened = await openFolderName(row, reader);
  return {
    folder_id: row.fol_folder_id,
    name: opened.name,
    parent_id: row.fol_fol_folder_id_parent,
    ...(row.fol_is_sealed ? { sealed: true as const, content_locked: opened.content_locked ?? true } : {}),
    create_time: formatTimestamp(row.fol_create_time),
    update_time: formatTimestamp(row.fol_update_time),
  };
}

export async function foldersFor(rows: FolderRow[], reader: SealedReader | null): Promise<DriveFolder[]> {
  const out: DriveFolder[] = [];
  for (const row of rows) out.push(await toDriveFolder(row, reader));
  return out;
}

export async function loadFolder(db: Kysely<DB>, folderId: number, reader: SealedReader | null): Promise<DriveFolder> {
  return toDriveFolder(await selectFolders(db).where('fol_folder_id', '=', folderId).executeTakeFirstOrThrow(), reader);
}

/** What messages and breadcrumbs call a sealed folder whose name they cannot show. */
export const SEALED_FOLDER_LABEL = 'Sealed folder';

/** A folder's name for this reader (breadcrumbs): a sealed one's opened, or SEALED_FOLDER_LABEL. */
export async function folderNameFor(db: Kysely<DB>, folderId: number, reader: SealedReader | null): Promise<string> {
  const row = await selectFolders(db).where('fol_folder_id', '=', folderId).executeTakeFirst();
  if (!row) return '';
  return (await openFolderName(row, reader)).name ?? SEALED_FOLDER_LABEL;
}

/**
 * The file's output, with is_trashed true also when a folder above it is in the trash; a sealed file's name
 * opened when the reader's vault window allows (else null with content_locked true).
 */
export async function fileOutput(db: Kysely<DB>, fileId: number, folderInTrash: boolean, reader: SealedReader | null): Promise<DriveFile> {
  const file = await loadDriveFile(db, fileId, reader);
  if (!file) throw notFound('file');
  return folderInTrash ? { ...file, is_trashed: true } : file;
}

/** The output of a resolved item after a change: `{file}` or `{folder}`. */
export async function itemOutput(db: Kysely<DB>, kind: 'file' | 'folder', id: number, reader: SealedReader | null): Promise<{ file: DriveFile } | { folder: DriveFolder }> {
  if (kind === 'folder') return { folder: await loadFolder(db, id, reader) };
  const row = await db.selectFrom('fil_files').select('fil_fol_folder_id').where('fil_file_id', '=', id).executeTakeFirstOrThrow();
  const above = row.fil_fol_folder_id === null ? [] : await folderChain(db, row.fil_fol_folder_id);
  return { file: await fileOutput(db, id, above.some((f) => f.isTrashed), reader) };
}

/** A file or folder name: no path separators or control characters, not '.' or '..'. */
export function checkName(name: string, field = 'name'): string {
  const trimmed = name.trim();
  if (trimmed === '') throw validationError({ [field]: 'is required' });
  // eslint-disable-next-line no-control-regex
  if (/[/\\\u0000-\u001f\u007f]/.test(trimmed)) throw validationError({ [field]: 'must not contain slashes or control characters' });
  if (trimmed === '.' || trimmed === '..') throw validationError({ [field]: "must not be '.' or '..'" });
  return trimmed;
}

/** Whether a live, untrashed folder of that owner already has this name beside `parentId`. */
export async function folderNameTaken(db: Kysely<DB>, ownerUserId: number, parentId: number | null, name: string, exceptFolderId?: number): Promise<boolean> {
  let q = db
    .selectFrom('fol_folders')
    .select('fol_folder_id')
    .where('fol_usr_user_id', '=', ownerUserId)
    .where('fol_name', '=', name)
    .where('fol_delete_time', 'is', null)
    .where('fol_is_trashed', '=', false);
  q = parentId === null ? q.where('fol_fol_folder_id_parent', 'is', null) : q.where('fol_fol_folder_id_parent', '=', parentId);
  if (exceptFolderId !== undefined) q = q.where('fol_folder_id', '<>', exceptFolderId);
  return (await q.executeTakeFirst()) !== undefined;
}

export const nameTaken = (name: string) => driveRefusal('name_taken', `A folder named "${name}" already exists there`, { name });

/** Runs a folder write; the sibling-name index's violation (a concurrent twin) becomes name_taken. */
export async function folderWrite<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (e) {
    if (isUniqueViolation(e)) throw nameTaken(name);
    throw e;
  }
}

/**
 * Holds the owner's Drive lock (the per-owner quota lock) until the transaction ends. Every change to an
 * owner's Drive takes it before writing, so the owner's change feed commits in cursor order and a quota
 * decision sees the other writes.
 */
export async function lockOwner(trx: Kysely<DB>, ownerUserId: number): Promise<void> {
  await lockOwnerQuota(trx, ownerUserId);
}

/** A feature reader for one action or page (the tier read once; from memory outside a transaction when given the cache). */
export function tierReader(db: Kysely<DB>, registry: FeatureRegistry, userTiers?: UserTierCache): TierFeatureReader {
  return new TierFeatureReader(db, registry, userTiers);
}

/** How an action reads sealed content: through the caller's browser-session vault window, if any. */
export function readerOf(ctx: { db: Kysely<DB>; user: { usr_user_id: number } | null; web: { vault: SealedReader['window'] } | null }): SealedReader {
  return { db: ctx.db, window: ctx.web?.vault ?? null, userId: ctx.user?.usr_user_id ?? null };
}

/**
 * The sealedFor of an action answer: the owners of sealed files and folders it shows opened (DESIGN 10). A
 * sealed folder's name opens only for its owner, so an opened one belongs to `readerUserId`.
 */
export function sealedForOf(
  output: { file?: DriveFile } | { folder?: DriveFolder } | { files?: DriveFile[]; folders?: DriveFolder[] },
  readerUserId: number | null = null,
): { sealedFor?: number[] } {
  const files = 'files' in output && output.files ? output.files : 'file' in output && output.file ? [output.file] : [];
  const folders = 'folders' in output && output.folders ? output.folders : 'folder' in output && output.folder ? [output.folder] : [];
  const owners = new Set(openedSealedOwners(files));
  if (readerUserId !== null && folders.some((f) => f.sealed && f.content_locked === false)) owners.add(readerUserId);
  return owners.size > 0 ? { sealedFor: [...owners] } : {};
}

/**
 * The owner's open vault window for writing sealed content (a name, the bytes of a sealed folder's file):
 * only the owner writes there, and only while their vault is unlocked in this browser session.
 */
export async function requireOwnerUnlocked(ctx: { db: Kysely<DB>; user: { usr_user_id: number } | null; web: { vault: SealedReader['window'] } | null }, ownerUserId: number) {
  if (ctx.user?.usr_user_id !== ownerUserId) throw driveRefusal('forbidden', 'Only the owner can add or rename files in a sealed folder');
  const open = ctx.web?.vault ? await ctx.web.vault.unsealFor(ctx.db, ownerUserId) : null;
  if (!open) {
    throw driveRefusal('vault_locked', ctx.web ? 'This folder is sealed: unlock your vault (Profile, Security) first' : 'Sealed folders are written from a signed-in browser with the vault unlocked', {
      unlock_url: '/profile/security',
    });
  }
  return open;
}
