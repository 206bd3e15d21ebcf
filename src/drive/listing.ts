import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { SealedReader } from '../accounts/vault/sealed.js';
import { driveFilesFor, selectDriveFiles, type DriveFile } from './files.js';
import { folderChain, folderNameFor, foldersFor, resolveItem, selectFolders, type DriveFolder, type DriveItem } from './tree.js';

export interface ListOptions {
  /** A folder's contents; null: the caller's root (or the whole trash, or what is shared with them). */
  folderId: number | null;
  /** The trashed items instead of the live ones. */
  trashed: boolean;
  /** What others shared with the caller directly (a grant on the file or folder itself). */
  shared: boolean;
  /** 0-based. */
  page: number;
  numperpage: number;
}

export interface DriveListing {
  folders: DriveFolder[];
  files: DriveFile[];
  num_results: number;
  /** Some file on the page is sealed and its name cannot be opened now (DESIGN 10: `locked: true`). */
  locked: boolean;
  /** The listed folder, when one was asked for. */
  folder: DriveItem | null;
}

type FolderQuery = ReturnType<typeof selectFolders>;
type FileQuery = ReturnType<typeof selectDriveFiles>;

/** Folders first (by name), then files (by name), one page of the two together. */
async function pageOf(folderQuery: FolderQuery, fileQuery: FileQuery, o: ListOptions, inTrash: boolean, reader: SealedReader | null): Promise<Omit<DriveListing, 'folder' | 'locked'>> {
  const [folderCount, fileCount] = await Promise.all([
    folderQuery.clearSelect().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    fileQuery.clearSelect().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  const nFolders = Number(folderCount.n);
  const start = o.page * o.numperpage;
  const folderRows =
    start < nFolders ? await folderQuery.orderBy('fol_name').orderBy('fol_folder_id').offset(start).limit(o.numperpage).execute() : [];
  const room = o.numperpage - folderRows.length;
  const fileRows =
    room > 0 ? await fileQuery.orderBy('fil_name').orderBy('fil_file_id').offset(Math.max(0, start - nFolders)).limit(room).execute() : [];
  return {
    folders: await foldersFor(folderRows, reader),
    files: (await driveFilesFor(fileRows, reader)).map((f) => ({ ...f, is_trashed: f.is_trashed || inTrash })),
    num_results: nFolders + Number(fileCount.n),
  };
}

/** Items granted to the caller directly, still live for them (not in the trash, nor below a trashed folder). */
async function sharedWith(db: Kysely<DB>, userId: number, o: ListOptions, reader: SealedReader | null): Promise<Omit<DriveListing, 'folder' | 'locked'>> {
  const grants = await db
    .selectFrom('fga_file_access_grants')
    .select(['fga_fil_file_id', 'fga_fol_folder_id'])
    .where('fga_usr_user_id', '=', userId)
    .where('fga_delete_time', 'is', null)
    .execute();
  const fileIds = grants.flatMap((g) => (g.fga_fil_file_id === null ? [] : [g.fga_fil_file_id]));
  const folderIds = grants.flatMap((g) => (g.fga_fol_folder_id === null ? [] : [g.fga_fol_folder_id]));
  const folderRows = folderIds.length === 0 ? [] : await selectFolders(db).where('fol_folder_id', 'in', folderIds).where('fol_is_trashed', '=', false).where('fol_usr_user_id', '<>', userId).execute();
  const fileRows = fileIds.length === 0 ? [] : await selectDriveFiles(db).where('fil_file_id', 'in', fileIds).where('fil_is_trashed', '=', false).where('fil_usr_user_id', '<>', userId).execute();
  const trashedAbove = new Map<number, Promise<boolean>>();
  const hidden = (parent: number | null) => {
    if (parent === null) return Promise.resolve(false);
    let known = trashedAbove.get(parent);
    if (!known) {
      known = folderChain(db, parent).then((chain) => chain.some((f) => f.isTrashed));
      trashedAbove.set(parent, known);
    }
    return known;
  };
  const folders = [];
  for (const r of folderRows) if (!(await hidden(r.fol_fol_folder_id_parent))) folders.push(r);
  const files = [];
  for (const r of fileRows) if (!(await hidden(r.fil_fol_folder_id))) files.push(r);
  const byName = (a: { name: string; id: number }, b: { name: string; id: number }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id);
  folders.sort((a, b) => byName({ name: a.fol_name ?? '\uffff', id: a.fol_folder_id }, { name: b.fol_name ?? '\uffff', id: b.fol_folder_id }));
  files.sort((a, b) => byName({ name: a.fil_name ?? '\uffff', id: a.fil_file_id }, { name: b.fil_name ?? '\uffff', id: b.fil_file_id }));
  const all = [...folders.map((f) => ({ folder: f })), ...files.map((f) => ({ file: f }))];
  const slice = all.slice(o.page * o.numperpage, (o.page + 1) * o.numperpage);
  return {
    folders: await foldersFor(slice.flatMap((s) => ('folder' in s ? [s.folder] : [])), reader),
    files: await driveFilesFor(slice.flatMap((s) => ('file' in s ? [s.file] : [])), reader),
    num_results: all.length,
  };
}

/**
 * One page of a Drive listing for the caller: a folder's contents (they own it or hold a grant on it or
 * above it), their root, their trash (everything they trashed, flat), or what is shared with them. Sealed
 * files show their names only when the reader's vault window opens them; otherwise name null,
 * content_locked true, and the listing's `locked` true (never an error). Sealed names cannot be sorted by
 * the server: sealed files and folders come after the others, by id. Sealed folders' own names likewise.
 */
export async function listDrive(db: Kysely<DB>, userId: number, o: ListOptions, reader: SealedReader | null): Promise<DriveListing> {
  const withLocked = (l: Omit<DriveListing, 'locked'>): DriveListing => ({
    ...l,
    locked: l.files.some((f) => f.content_locked === true) || l.folders.some((f) => f.content_locked === true),
  });
  if (o.folderId !== null) {
    const folder = await resolveItem(db, userId, { kind: 'folder', id: o.folderId }, 'read');
    // The breadcrumbs: sealed folders' names opened for this reader, or called what they are.
    if (folder.sealed) folder.name = await folderNameFor(db, folder.id, reader);
    for (const a of folder.ancestors) if (a.sealed) a.name = await folderNameFor(db, a.id, reader);
    const folders = selectFolders(db).where('fol_fol_folder_id_parent', '=', folder.id).where('fol_is_trashed', '=', o.trashed);
    const files = selectDriveFiles(db).where('fil_fol_folder_id', '=', folder.id).where('fil_is_trashed', '=', o.trashed);
    return withLocked({ ...(await pageOf(folders, files, o, folder.inTrash, reader)), folder });
  }
  if (o.shared) return withLocked({ ...(await sharedWith(db, userId, o, reader)), folder: null });
  let folders = selectFolders(db).where('fol_usr_user_id', '=', userId).where('fol_is_trashed', '=', o.trashed);
  let files = selectDriveFiles(db).where('fil_usr_user_id', '=', userId).where('fil_is_trashed', '=', o.trashed);
  if (!o.trashed) {
    folders = folders.where('fol_fol_folder_id_parent', 'is', null);
    files = files.where('fil_fol_folder_id', 'is', null);
  }
  return withLocked({ ...(await pageOf(folders, files, o, o.trashed, reader)), folder: null });
}
