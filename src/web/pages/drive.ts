import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { listDrive, type DriveListing } from '../../drive/listing.js';
import { SEALED_FOLDER_LABEL, type DriveFolder, type DriveItem } from '../../drive/tree.js';
import type { SealedReader } from '../../accounts/vault/sealed.js';
import { openFolderName } from '../../drive/sealed-files.js';
import type { DB } from '../../db/types.js';
import type { DriveRole } from '../../drive/access.js';
import { canEdit, fileAccess, folderAccess } from '../../drive/access.js';
import type { DriveFile } from '../../drive/files.js';
import { driveUsageBytes } from '../../drive/quota.js';
import { isApiError } from '../../http/errors.js';
import { formatBytes } from '../../lib/byte-size.js';
import { vaultWindowOf } from '../../accounts/vault/request-window.js';
import { vaultOf } from '../../accounts/vault/vaults.js';
import type { Services } from '../../services.js';
import { driveFeatures, fetchUserTier, TierFeatureReader, type DriveFeatures, type UserTierCache } from '../../tiers/features.js';
import type { FeatureRegistry } from '../../tiers/feature-registry.js';
import { guardPage, sendViewerPage } from '../forms.js';
import { html, raw, type SafeHtml } from '../html.js';

// The member's Drive (DESIGN 9): the listing is rendered here from the same code drive_list runs; every
// change goes through the drive_* actions from static/drive.js (serviceApi), uploads through the chunk
// endpoints. The page reloads after a change, with ?done= naming what happened.

const PER_PAGE = 50;
/** From this share of the storage used on, the quota line offers an upgrade. */
const NEAR_LIMIT = 0.8;
const UPGRADE_URL = '/profile/subscription#change-tier';

const DONE_MESSAGES: Record<string, string> = {
  uploaded: 'Upload complete.',
  folder: 'Folder created.',
  renamed: 'Renamed.',
  moved: 'Moved.',
  trashed: 'Moved to the trash.',
  restored: 'Restored from the trash.',
  deleted: 'Deleted for good.',
  version_restored: 'The earlier version is restored.',
};

type View = 'files' | 'trash' | 'shared';

const STYLE = `
#drive .toolbar{display:flex;flex-wrap:wrap;gap:.75rem;align-items:flex-end}
#drive .toolbar form{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;flex:1 1 16rem;margin:0}
#drive .toolbar input[type=text]{flex:1 1 10rem;min-width:0}
#drive .toolbar button{margin-top:0}
#drive .upload-label{display:inline-block;background:#2454d6;color:#fff;border-radius:4px;padding:.55rem 1.1rem;cursor:pointer}
#drive .upload-label input{position:absolute;width:1px;height:1px;opacity:0}
#drive nav.views a[aria-current=page]{font-weight:700;text-decoration:none;color:#1b1f24}
#drive .crumbs{margin:.25rem 0 .75rem;overflow-wrap:anywhere}
#drive .quota{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center}
#drive .quota progress{flex:1 1 12rem;height:.8rem}
#drive .quota.near progress{accent-color:#b3261e}
#drive td.name{overflow-wrap:anywhere}#drive td.name svg{width:1.1em;height:1.1em;vertical-align:-.15em;margin-right:.4rem;fill:none;stroke:#59636e;stroke-width:1.6}
#drive td.name .folder svg{stroke:#2454d6}
#drive td.ops button.link{margin-right:.6rem}
#drive #upload-panel progress{width:100%;height:1rem}
#drive .dialog{position:fixed;inset:0;background:rgba(15,20,30,.45);display:flex;align-items:center;justify-content:center;padding:1rem;z-index:10}
#drive .dialog[hidden]{display:none}
#drive .dialog .card{width:100%;max-width:32rem;max-height:90vh;overflow:auto;margin:0}
#drive .dialog ul{padding-left:0;list-style:none}#drive .dialog li{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;padding:.3rem 0;border-bottom:1px solid #e5e8ec}
#drive .dialog li .grantee{flex:1 1 10rem;overflow-wrap:anywhere}#drive .dialog li select{width:auto}
#drive .dialog li span,#drive .dialog p{overflow-wrap:anywhere}
@media (max-width:600px){#drive table.stack td[data-label]::before{content:none}#drive table.stack td.size,#drive table.stack td.time{display:inline;color:#59636e;font-size:.85rem}
#drive table.stack td.size:not(:empty)::after{content:" · "}#drive table.stack td.name{font-weight:600}#drive td.ops{padding-top:.3rem}}
#drive .sealed-tag{display:inline-block;font-size:.75rem;font-weight:600;color:#5b3a00;background:#fff1cc;border:1px solid #e6c46a;border-radius:3px;padding:0 .35rem;margin-left:.4rem;vertical-align:.1em}
#drive .locked-name{color:#59636e;font-style:italic}
#drive .toolbar .sealed-choice{display:flex;gap:.35rem;align-items:center;flex:0 0 auto;margin:0;font-weight:400;white-space:nowrap}
#drive .toolbar .sealed-choice input{width:auto;margin:0}
#drive #vault-prompt{border-left:4px solid #e6c46a}
#drive input[type=datetime-local]{width:100%;padding:.5rem;border:1px solid #b8c0cc;border-radius:4px;font:inherit;background:#fff}
#drive .row{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end}#drive .row>*{flex:1 1 10rem}#drive .row button{flex:0 0 auto}
`;

interface Quota {
  tierName: string | null;
  usedBytes: number;
  limits: DriveFeatures;
}

async function quotaOf(db: Kysely<DB>, registry: FeatureRegistry, userId: number, userTiers: UserTierCache): Promise<Quota> {
  const [tier, limits, usedBytes] = await Promise.all([
    fetchUserTier(db, userId, userTiers),
    driveFeatures(new TierFeatureReader(db, registry, userTiers), userId),
    driveUsageBytes(db, userId),
  ]);
  return { tierName: tier ? tier.displayName || tier.name : null, usedBytes, limits };
}

/** Used of total with the tier's name; an upgrade link when near the limit, over it, or without storage. */
function quotaCard(q: Quota): SafeHtml {
  const total = q.limits.storageBytes;
  if (total <= 0 || q.limits.maxFileBytes <= 0) {
    const why = q.tierName ? html`Your plan, <strong>${q.tierName}</strong>, includes no Drive storage.` : html`You have no plan with Drive storage.`;
    return html`<div class="card quota near" id="quota"><span>${why}</span> <a id="upgrade-link" href="${UPGRADE_URL}">Upgrade</a></div>`;
  }
  const share = q.usedBytes / total;
  const near = share >= NEAR_LIMIT;
  return html`<div class="card quota${near ? ' near' : ''}" id="quota">
<span id="quota-text"><strong>${formatBytes(q.usedBytes)}</strong> of ${formatBytes(total)} used</span>
<progress id="quota-bar" max="${total}" value="${Math.min(q.usedBytes, total)}" aria-label="Storage used">${Math.round(share * 100)}%</progress>
<span id="quota-tier">${q.tierName ? html`<strong>${q.tierName}</strong> plan` : ''}</span>
${near ? html`<a id="upgrade-link" href="${UPGRADE_URL}">${share >= 1 ? 'Your storage is full: upgrade' : 'Running out of space? Upgrade'}</a>` : ''}
</div>`;
}

function viewNav(view: View): SafeHtml {
  const link = (v: View, href: string, label: string) => html`<a href="${href}"${v === view ? html` aria-current="page"` : ''}>${label}</a>`;
  return html`<nav class="sub views" aria-label="Drive views">${link('files', '/drive', 'My files')}${link('shared', '/drive?view=shared', 'Shared with me')}${link('trash', '/drive?view=trash', 'Trash')}</nav>`;
}

function crumbs(folder: DriveItem | null, ancestors: { id: number; name: string }[], view: View): SafeHtml {
  if (!folder) return html``;
  const top = view === 'shared' || folder.role !== 'owner' ? html`<a href="/drive?view=shared">Shared with me</a>` : html`<a href="/drive">My files</a>`;
  const path = [...ancestors].reverse().map((a) => html` / <a href="/drive?folder=${a.id}">${a.name}</a>`);
  return html`<p class="crumbs" id="crumbs">${top}${path} / <strong>${folder.name}</strong></p>`;
}

/** What the viewer may do with one row; the server checks each again when it is asked. */
interface RowRights {
  role: DriveRole;
  inTrash: boolean;
  linksAllowed: boolean;
  /** The owner's own tree is on show, so the move dialog offers their folders. */
  movable: boolean;
  /** A sealed item: no share or public link (DESIGN 10). */
  sealed?: boolean;
}

function opButtons(kind: 'file' | 'folder', r: RowRights): SafeHtml[] {
  const b = (op: string, label: string) => html`<button type="button" class="link" data-op="${op}">${label}</button>`;
  if (r.inTrash) return r.role === 'owner' ? [b('restore', 'Restore'), b('delete', 'Delete forever')] : [];
  const ops: SafeHtml[] = [];
  if (canEdit(r.role)) ops.push(b('rename', 'Rename'));
  if (kind === 'file') ops.push(b('versions', 'Versions'));
  if (r.role === 'owner' && r.movable) ops.push(b('move', 'Move'));
  if (r.role === 'owner' && !r.sealed) ops.push(b('share', 'Share'));
  if (kind === 'file' && r.role === 'owner' && r.linksAllowed && !r.sealed) ops.push(b('links', 'Links'));
  if (canEdit(r.role)) ops.push(b('trash', 'Trash'));
  return ops;
}

const LOCK_ICON = html`<svg viewBox="0 0 24 24" aria-hidden="true"><rect x="5" y="11" width="14" height="9" rx="1.5"/><path d="M8 11V8a4 4 0 0 1 8 0v3"/></svg>`;
const SEALED_TAG = html`<span class="sealed-tag">Sealed</span>`;
const FOLDER_ICON = html`<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M3 6.5A1.5 1.5 0 0 1 4.5 5h4.6l2 2.2h8.4A1.5 1.5 0 0 1 21 8.7v9.8a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 18.5z"/></svg>`;
const FILE_ICON = html`<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M6 3h8l5 5v12a1 1 0 0 1-1 1H6a1 1 0 0 1-1-1V4a1 1 0 0 1 1-1z"/><path d="M14 3v5h5"/></svg>`;

/** Marks rows whose content the viewer may change (the versions dialog offers upload and restore). */
const editable = (r: RowRights) => (canEdit(r.role) && !r.inTrash ? html` data-can-edit="1"` : '');

function folderRow(f: DriveFolder, r: RowRights): SafeHtml {
  if (f.content_locked) {
    // A sealed folder whose name the viewer's vault does not open now is shown as "Locked folder" (DESIGN 10, issue 35).
    return html`<tr data-kind="folder" data-id="${f.folder_id}" data-name="" data-locked="1"${editable(r)}>
<td class="name" data-label="Name"><span class="folder">${FOLDER_ICON}</span>${LOCK_ICON}${r.inTrash ? html`<span class="locked-name">Locked folder</span>` : html`<a class="locked-name" href="/drive?folder=${f.folder_id}">Locked folder</a>`}${SEALED_TAG}</td>
<td class="size" data-label="Size"></td><td class="time" data-label="Modified">${f.update_time}</td>
<td class="ops actions">${opButtons('folder', r)}</td></tr>`;
  }
  return html`<tr data-kind="folder" data-id="${f.folder_id}" data-name="${f.name}"${editable(r)}>
<td class="name" data-label="Name"><span class="folder">${FOLDER_ICON}</span>${r.inTrash ? f.name : html`<a href="/drive?folder=${f.folder_id}">${f.name}</a>`}${f.sealed ? SEALED_TAG : ''}</td>
<td class="size" data-label="Size"></td><td class="time" data-label="Modified">${f.update_time}</td>
<td class="ops actions">${opButtons('folder', r)}</td></tr>`;
}

function fileRow(f: DriveFile, r: RowRights): SafeHtml {
  if (f.content_locked) {
    // A sealed file the viewer's vault does not open now: a placeholder, no name, no link (DESIGN 10).
    return html`<tr data-kind="file" data-id="${f.file_id}" data-name="" data-locked="1">
<td class="name" data-label="Name">${LOCK_ICON}<span class="locked-name">Locked file</span>${SEALED_TAG}</td>
<td class="size" data-label="Size">${formatBytes(f.size_bytes)}</td><td class="time" data-label="Modified">${f.update_time}</td>
<td class="ops actions">${r.inTrash && r.role === 'owner' ? opButtons('file', r) : ''}</td></tr>`;
  }
  const name = f.name ?? '';
  return html`<tr data-kind="file" data-id="${f.file_id}" data-name="${name}"${editable(r)}>
<td class="name" data-label="Name">${f.sealed ? LOCK_ICON : FILE_ICON}${r.inTrash ? name : html`<a class="download" href="/drive/file/${f.file_id}" download>${name}</a>`}${f.sealed ? SEALED_TAG : ''}${f.version_count > 0 ? html` <span class="help">(${f.version_count} earlier)</span>` : ''}</td>
<td class="size" data-label="Size">${formatBytes(f.size_bytes)}</td><td class="time" data-label="Modified">${f.update_time}</td>
<td class="ops actions">${opButtons('file', { ...r, sealed: f.sealed })}</td></tr>`;
}

/** Asks the member to unlock: shown where sealed names are hidden or a sealed folder cannot take uploads. */
function vaultPrompt(): SafeHtml {
  return html`<div class="card notice" id="vault-prompt" role="status"><p><strong>Sealed content is locked.</strong> Names and contents of sealed files open only while your vault is unlocked.</p>
<p><a href="/profile/security#vault" id="vault-unlock-link">Unlock your vault</a> and come back to this page.</p></div>`;
}

/** Each row's rights: in a folder, the folder's role reaches everything in it; in "shared", each item's own. */
async function rowRights(db: Kysely<DB>, userId: number, listing: DriveListing, view: View, linksAllowed: boolean) {
  const inTrashView = view === 'trash' || (listing.folder?.inTrash ?? false);
  const movable = view === 'files' && (listing.folder === null || listing.folder.role === 'owner');
  const folderRole = listing.folder?.role ?? 'owner';
  const rights = new Map<string, RowRights>();
  for (const f of listing.folders) {
    const role = view === 'shared' && !listing.folder ? ((await folderAccess(db, userId, f.folder_id))?.role ?? 'viewer') : folderRole;
    rights.set(`folder:${f.folder_id}`, { role, inTrash: inTrashView, linksAllowed, movable, sealed: f.sealed });
  }
  for (const f of listing.files) {
    const role = view === 'shared' && !listing.folder ? ((await fileAccess(db, userId, f.file_id))?.role ?? 'viewer') : f.owner_user_id === userId ? 'owner' : folderRole;
    rights.set(`file:${f.file_id}`, { role, inTrash: inTrashView || f.is_trashed, linksAllowed, movable });
  }
  return rights;
}

function pager(listing: DriveListing, pageNo: number, base: URLSearchParams): SafeHtml {
  const pages = Math.ceil(listing.num_results / PER_PAGE);
  if (pages <= 1) return html``;
  const at = (p: number) => {
    const q = new URLSearchParams(base);
    q.set('page', String(p));
    return `/drive?${q.toString()}`;
  };
  return html`<nav class="sub" id="pager">${pageNo > 0 ? html`<a href="${at(pageNo - 1)}" rel="prev">Previous</a>` : ''}<span>Page ${pageNo + 1} of ${pages}</span>${pageNo + 1 < pages ? html`<a href="${at(pageNo + 1)}" rel="next">Next</a>` : ''}</nav>`;
}

/** Most folders the move dialog lists; a Drive with more is moved folder by folder through the API. */
const MAX_MOVE_TARGETS = 1000;

/** The owner's live folders outside the trash, as paths ("Photos / 2026"), sorted. */
async function moveTargets(db: Kysely<DB>, userId: number, reader: SealedReader): Promise<Array<{ id: number; path: string }>> {
  const found = await db
    .selectFrom('fol_folders')
    .select(['fol_folder_id', 'fol_usr_user_id', 'fol_fol_folder_id_parent', 'fol_name', 'fol_is_sealed', 'fol_sealed_key', 'fol_sealed_name'])
    .where('fol_usr_user_id', '=', userId)
    .where('fol_delete_time', 'is', null)
    .where('fol_is_trashed', '=', false)
    .orderBy('fol_folder_id')
    .limit(MAX_MOVE_TARGETS)
    .execute();
  // Sealed folders' names opened for this viewer, or called what they are.
  const rows = [];
  for (const r of found) rows.push({ ...r, fol_name: r.fol_is_sealed ? ((await openFolderName(r, reader)).name ?? SEALED_FOLDER_LABEL) : (r.fol_name ?? '') });
  const byId = new Map(rows.map((r) => [r.fol_folder_id, r]));
  const pathOf = (id: number): string | null => {
    const names: string[] = [];
    for (let at = byId.get(id); at; at = at.fol_fol_folder_id_parent === null ? undefined : byId.get(at.fol_fol_folder_id_parent)) {
      names.unshift(at.fol_name);
      if (at.fol_fol_folder_id_parent === null) return names.join(' / ');
      if (names.length > rows.length) return null;
    }
    return null; // below a trashed folder (or beyond the listed ones)
  };
  return rows
    .map((r) => ({ id: r.fol_folder_id, path: pathOf(r.fol_folder_id) }))
    .filter((t): t is { id: number; path: string } => t.path !== null)
    .sort((a, b) => a.path.localeCompare(b.path));
}

function moveDialog(targets: Array<{ id: number; path: string }>): SafeHtml {
  return html`<div class="dialog" id="move-dialog" role="dialog" aria-modal="true" aria-labelledby="move-title" hidden><div class="card">
<h2 id="move-title">Move</h2>
<form id="move-form"><label for="move-target">Move to</label><select id="move-target"><option value="">My files (top level)</option>${targets.map((t) => html`<option value="${t.id}">${t.path}</option>`)}</select>
<button type="submit" class="primary">Move</button> <button type="button" class="secondary" data-close>Cancel</button></form>
<p id="move-status" class="error" role="alert"></p>
</div></div>`;
}

const DIALOGS = html`
<div class="dialog" id="rename-dialog" role="dialog" aria-modal="true" aria-labelledby="rename-title" hidden><div class="card">
<h2 id="rename-title">Rename</h2>
<form id="rename-form"><label for="rename-name">New name</label><input type="text" id="rename-name" maxlength="255" required>
<button type="submit" class="primary">Rename</button> <button type="button" class="secondary" data-close>Cancel</button></form>
</div></div>
<div class="dialog" id="share-dialog" role="dialog" aria-modal="true" aria-labelledby="share-title" hidden><div class="card">
<h2 id="share-title">Share</h2>
<p class="help">People you add can see this (and, for a folder, everything in it). Editors can also upload, rename, move and trash; what they add counts toward your storage.</p>
<ul id="share-grants"></ul><p id="share-empty" class="help">Not shared with anyone.</p>
<form id="share-add" class="row"><div><label for="share-email">Email address</label><input type="email" id="share-email" autocomplete="off"></div>
<div><label for="share-new-role">Role</label><select id="share-new-role"><option value="viewer">Can view</option><option value="editor">Can edit</option></select></div>
<button type="submit" class="secondary">Add</button></form>
<button type="button" class="primary" id="share-save">Save sharing</button> <button type="button" class="secondary" data-close>Close</button>
<p id="share-status" role="status"></p>
</div></div>
<div class="dialog" id="links-dialog" role="dialog" aria-modal="true" aria-labelledby="links-title" hidden><div class="card">
<h2 id="links-title">Links</h2>
<div id="link-created" class="notice" hidden><p>Anyone with this link can download the file. Copy it now: it is not shown again.</p><code class="secret" id="link-url"></code></div>
<ul id="link-list"></ul><p id="links-empty" class="help">No working links.</p>
<form id="link-form"><div class="row"><div><label for="link-expires">Expires (optional)</label><input type="datetime-local" id="link-expires"></div>
<div><label for="link-password">Password (optional)</label><input type="password" id="link-password" minlength="4" autocomplete="new-password"></div></div>
<button type="submit" class="primary">Create link</button> <button type="button" class="secondary" data-close>Close</button></form>
<p id="link-status" class="error" role="alert"></p>
</div></div>
<div class="dialog" id="versions-dialog" role="dialog" aria-modal="true" aria-labelledby="versions-title" hidden><div class="card">
<h2 id="versions-title">Versions</h2>
<ul id="version-list"></ul><p id="versions-empty" class="help">No earlier versions.</p>
<div id="version-upload"><label for="version-input">Upload a new version</label><input type="file" id="version-input"></div>
<button type="button" class="secondary" data-close>Close</button>
<p id="version-status" class="error" role="alert"></p>
</div></div>`;

/** The /drive page for signed-in members while drive_active is on. */
export function drivePage(web: FastifyInstance, services: Services): void {
  web.get('/drive', async (request, reply) => {
    const viewer = await guardPage(request, reply, services, 0);
    if (!viewer) return reply;
    if (!services.settings.bool('drive_active')) {
      return sendViewerPage(reply, viewer, 'Drive', html`<div class="card"><p>Drive is not available on this site.</p></div>`, 404);
    }
    const { db } = services;
    const userId = viewer.user.usr_user_id;
    const query = request.query as Record<string, unknown>;
    const folderId = /^[1-9]\d{0,15}$/.test(String(query.folder ?? '')) ? Number(query.folder) : null;
    const view: View = folderId === null && (query.view === 'trash' || query.view === 'shared') ? query.view : 'files';
    const pageNo = /^\d{1,6}$/.test(String(query.page ?? '')) ? Number(query.page) : 0;
    const vaultWindow = vaultWindowOf(services, request);

    let listing: DriveListing;
    try {
      listing = await listDrive(db, userId, { folderId, trashed: view === 'trash', shared: view === 'shared', page: pageNo, numperpage: PER_PAGE }, { db, window: vaultWindow, userId });
    } catch (e) {
      if (!isApiError(e) || e.status >= 500) throw e;
      return sendViewerPage(reply, viewer, 'Drive', html`${viewNav('files')}<div class="card"><p class="error" id="not-found">That folder does not exist, or it is not shared with you.</p></div>`, 404);
    }
    const folder = listing.folder;
    const ancestors = folder?.ancestors ?? [];
    // Grantees see the path only from the folder they were given.
    const visible = folder && folder.role !== 'owner' ? await visibleAncestors(db, userId, ancestors) : ancestors;
    const quota = await quotaOf(db, services.tiers.registry, userId, services.modelCaches.userTiers);
    const rights = await rowRights(db, userId, listing, view, quota.limits.shareLinks);
    const hasVault = (await vaultOf(db, userId)) !== null;
    const unlocked = hasVault && (await vaultWindow.isOpenFor(db, userId));
    // A sealed folder takes uploads only from its owner with the vault unlocked (the actions refuse otherwise).
    const sealedHere = folder?.sealed ?? false;
    const mayUpload = view === 'files' && (!folder || (canEdit(folder.role) && !folder.inTrash)) && (!sealedHere || (folder!.role === 'owner' && unlocked));
    const mayMakeFolder = view === 'files' && (!folder || (canEdit(folder.role) && !folder.inTrash)) && (!sealedHere || folder!.role === 'owner');
    const showPrompt = listing.locked || (sealedHere && folder!.role === 'owner' && !unlocked);
    const done = DONE_MESSAGES[String(query.done ?? '')];
    const base = new URLSearchParams(folderId !== null ? { folder: String(folderId) } : view !== 'files' ? { view } : {});
    const rows = [
      ...listing.folders.map((f) => folderRow(f, rights.get(`folder:${f.folder_id}`)!)),
      ...listing.files.map((f) => fileRow(f, rights.get(`file:${f.file_id}`)!)),
    ];
    const empty = view === 'trash' ? 'The trash is empty.' : view === 'shared' ? 'Nothing is shared with you yet.' : 'No files here yet.';

    const body = html`<style>${raw(STYLE)}</style>
<div id="drive"${folderId !== null ? html` data-folder-id="${folderId}"` : ''} data-view="${view}">
${done ? html`<p class="notice" id="done" role="status">${done}</p>` : ''}
${quotaCard(quota)}
${viewNav(folder && folder.role !== 'owner' ? 'shared' : view)}
${crumbs(folder, visible, view)}
${showPrompt ? vaultPrompt() : ''}
${mayUpload || mayMakeFolder
  ? html`<div class="card toolbar">
${mayUpload ? html`<label class="upload-label" for="upload-input">${sealedHere ? 'Upload sealed files' : 'Upload files'}<input type="file" id="upload-input" multiple></label>` : ''}
<form id="folder-form"><input type="text" id="folder-name" placeholder="New folder name" aria-label="New folder name" maxlength="255" required>${sealedFolderChoice(sealedHere, hasVault)}<button type="submit" class="secondary">New folder</button></form>
</div>`
  : ''}
<div class="card" id="upload-panel" hidden><p><strong id="upload-name"></strong></p><progress id="upload-progress" value="0" max="1"></progress><p class="help" id="upload-text" role="status"></p></div>
<div class="card" id="resume-panel" hidden><p><strong>Interrupted uploads</strong></p><ul id="resume-list"></ul></div>
${view === 'trash' ? html`<p class="help">Trashed files still count toward your storage until you delete them forever.</p>` : ''}
<div class="card"><table class="stack" id="drive-items"><thead><tr><th>Name</th><th>Size</th><th>Modified (UTC)</th><th><span class="help">Actions</span></th></tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="4" id="drive-empty">${empty}</td></tr>`}</tbody></table>
${pager(listing, pageNo, base)}</div>
<p id="result" class="error" role="alert"></p>
${DIALOGS}
${[...rights.values()].some((r) => r.movable && r.role === 'owner' && !r.inTrash) ? moveDialog(await moveTargets(db, userId, { db, window: vaultWindow, userId })) : ''}
</div>
<script src="/static/drive.js" defer></script>`;
    return sendViewerPage(reply, viewer, 'Drive', body, 200, { wide: true });
  });
}

/** The sealed choice of the new-folder form: inside a sealed folder every new folder is sealed anyway. */
function sealedFolderChoice(insideSealed: boolean, hasVault: boolean): SafeHtml {
  if (insideSealed) return html`<span class="help sealed-choice">Sealed, like this folder</span>`;
  if (!hasVault) return html`<span class="help sealed-choice"><a href="/profile/security#vault" id="vault-setup-link">Set up your vault</a>&nbsp;for sealed folders</span>`;
  return html`<label class="sealed-choice" for="folder-sealed"><input type="checkbox" id="folder-sealed"> Sealed</label>`;
}

/** The part of a folder's path a grantee may open: the folders they hold a grant on or below. */
async function visibleAncestors(db: Kysely<DB>, userId: number, ancestors: { id: number; name: string }[]) {
  const out: { id: number; name: string }[] = [];
  for (const a of ancestors) {
    if (!(await folderAccess(db, userId, a.id))) break;
    out.push(a);
  }
  return out;
}

