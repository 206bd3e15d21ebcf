import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DB } from '../../src/db/types.js';
import { recordChange } from '../../src/drive/changes.js';
import { addVersion, createFileFromBlob, DRIVE_SOURCE, ingestBlob } from '../../src/drive/files.js';
import { sha256Hex } from '../../src/lib/crypto.js';
import type { TestApp } from '../helpers/app.js';
import { createTier, type TestTier } from '../helpers/tiers.js';
import { createDriveApp } from './drive-upload-fixture.js';

// The Drive management actions (DESIGN 9) over HTTP: every action's answer, each refusal reason, grants
// and links, the change feed, and the drive_active switch. Content is stored the way a completed upload
// stores it (the one blob path), so these tests do not depend on the chunk endpoints.

const action = (name: string) => `/api/v1/action/${name}`;
const DRIVE_ACTIONS = [
  'drive_folder_create',
  'drive_rename',
  'drive_move',
  'drive_trash',
  'drive_restore',
  'drive_delete_forever',
  'drive_list',
  'drive_shares',
  'drive_share_sync',
  'drive_link_create',
  'drive_link_revoke',
  'drive_versions',
  'drive_version_restore',
  'drive_changes',
];

let t: TestApp;
let plus: TestTier;
let basic: TestTier;

beforeAll(async () => {
  t = await createDriveApp();
  plus = await createTier(t, {
    name: 'plus',
    displayName: 'Plus',
    level: 20,
    features: { drive_storage_bytes: 1000, drive_max_file_bytes: 500, drive_share_links: true, drive_versioning_depth: 3 },
  });
  basic = await createTier(t, {
    name: 'basic',
    displayName: 'Basic',
    level: 10,
    features: { drive_storage_bytes: 1000, drive_max_file_bytes: 500, drive_share_links: false, drive_versioning_depth: 1 },
  });
});
afterAll(async () => t.close());

interface Member {
  userId: number;
  email: string;
  headers: Record<string, string>;
}

async function member(tier: TestTier | null = plus): Promise<Member> {
  const { userId, email } = await t.createUser();
  if (tier) await t.services.tiers.membership.assignManually(userId, tier.tierId, null);
  const key = await t.createMachineKey({ userId });
  return { userId, email, headers: { public_key: key.publicKey, secret_key: key.secretKey } };
}

async function call(m: Member, name: string, payload: Record<string, unknown> = {}) {
  return t.request({ method: 'POST', url: action(name), headers: m.headers, payload });
}

async function ok(m: Member, name: string, payload: Record<string, unknown> = {}) {
  const res = await call(m, name, payload);
  expect([name, res.statusCode, res.json]).toEqual([name, 200, expect.objectContaining({ api_version: expect.anything() })]);
  return res.json.data;
}

async function refused(m: Member, name: string, payload: Record<string, unknown>, reason: string) {
  const res = await call(m, name, payload);
  expect([name, res.statusCode, res.json.errortype, res.json.data?.reason]).toEqual([name, 422, 'ActionError', reason]);
  return res.json;
}

async function invalid(m: Member, name: string, payload: Record<string, unknown>, field: string) {
  const res = await call(m, name, payload);
  expect([name, res.statusCode, res.json.errortype]).toEqual([name, 422, 'ValidationError']);
  expect(Object.keys(res.json.validation_errors ?? res.json.data?.validation_errors ?? res.json.errors ?? {})).toContain(field);
  return res.json;
}

async function storeBlob(trx: Kysely<DB>, content: string) {
  const store = t.services.driveStorage.blobs;
  const bytes = Buffer.from(content);
  const sha256 = sha256Hex(bytes);
  return ingestBlob(trx, store, { sha256, sizeBytes: bytes.length, mimeType: 'text/plain', time: t.clock.now() }, () =>
    store.put(sha256, Readable.from([bytes]), bytes.length),
  );
}

/** A file of the owner's as a completed upload makes it. */
async function seedFile(owner: Member, name: string, content: string, folderId: number | null = null): Promise<number> {
  return t.services.db.transaction().execute(async (trx) => {
    const blobId = await storeBlob(trx, content);
    const now = t.clock.now();
    const fileId = await createFileFromBlob(trx, {
      ownerUserId: owner.userId,
      source: DRIVE_SOURCE,
      name,
      folderId,
      blobId,
      sizeBytes: Buffer.byteLength(content),
      mimeType: 'text/plain',
      time: now,
    });
    await recordChange(trx, { ownerUserId: owner.userId, fileId, kind: 'create', time: now });
    return fileId;
  });
}

/** New content for a file, as a completed upload with file_id makes it: the old content becomes a version. */
async function seedVersion(owner: Member, fileId: number, content: string): Promise<void> {
  await t.services.db.transaction().execute(async (trx) => {
    const blobId = await storeBlob(trx, content);
    const now = t.clock.now();
    await addVersion(trx, { fileId, blobId, sizeBytes: Buffer.byteLength(content), mimeType: 'text/plain', time: now });
    await recordChange(trx, { ownerUserId: owner.userId, fileId, kind: 'version', time: now });
  });
}

async function folder(m: Member, name: string, parentId?: number): Promise<number> {
  const data = await ok(m, 'drive_folder_create', { name, ...(parentId ? { parent_id: parentId } : {}) });
  return data.folder.folder_id;
}

function blobRow(sha256: string) {
  return t.services.db.selectFrom('fbb_file_blobs').selectAll().where('fbb_sha256', '=', sha256).executeTakeFirst();
}

describe('drive_folder_create', () => {
  it('makes folders at the root and inside a folder, with the folder output', async () => {
    const m = await member();
    const data = await ok(m, 'drive_folder_create', { name: '  Photos ' });
    expect(data.folder).toEqual({
      folder_id: expect.any(Number),
      name: 'Photos',
      parent_id: null,
      create_time: '2026-03-01 12:00:00',
      update_time: '2026-03-01 12:00:00',
    });
    const inner = await ok(m, 'drive_folder_create', { name: '2026', parent_id: data.folder.folder_id });
    expect(inner.folder.parent_id).toBe(data.folder.folder_id);
  });

  it('refuses a sibling with the same name (name_taken) but allows it elsewhere and after the first is trashed', async () => {
    const m = await member();
    const a = await folder(m, 'Docs');
    const json = await refused(m, 'drive_folder_create', { name: 'Docs' }, 'name_taken');
    expect(json.data.name).toBe('Docs');
    await folder(m, 'Docs', a);
    const other = await member();
    await folder(other, 'Docs');
    await ok(m, 'drive_trash', { folder_id: a });
    await folder(m, 'Docs');
  });

  it('refuses a missing, foreign or trashed parent (not_found) and bad names (ValidationError)', async () => {
    const m = await member();
    const stranger = await member();
    const theirs = await folder(stranger, 'Private');
    await refused(m, 'drive_folder_create', { name: 'x', parent_id: theirs }, 'not_found');
    await refused(m, 'drive_folder_create', { name: 'x', parent_id: 999_999 }, 'not_found');
    const trashed = await folder(m, 'Old');
    await ok(m, 'drive_trash', { folder_id: trashed });
    await refused(m, 'drive_folder_create', { name: 'x', parent_id: trashed }, 'not_found');
    await invalid(m, 'drive_folder_create', { name: 'a/b' }, 'name');
    await invalid(m, 'drive_folder_create', { name: '..' }, 'name');
    await invalid(m, 'drive_folder_create', {}, 'name');
  });

  it('refuses nesting deeper than drive_max_folder_depth (too_deep)', async () => {
    const m = await member();
    await t.services.settings.set('drive_max_folder_depth', 3);
    try {
      const one = await folder(m, 'one');
      const two = await folder(m, 'two', one);
      const three = await folder(m, 'three', two);
      const json = await refused(m, 'drive_folder_create', { name: 'four', parent_id: three }, 'too_deep');
      expect(json.data.max_depth).toBe(3);
    } finally {
      await t.services.settings.set('drive_max_folder_depth', 32);
    }
  });
});

describe('drive_rename', () => {
  it('renames files and folders; folder names stay unique among siblings', async () => {
    const m = await member();
    const fileId = await seedFile(m, 'a.txt', 'alpha');
    const renamed = await ok(m, 'drive_rename', { file_id: fileId, name: 'b.txt' });
    expect(renamed.file).toMatchObject({ file_id: fileId, name: 'b.txt', folder_id: null, size_bytes: 5, mime_type: 'text/plain', sha256: sha256Hex('alpha'), version_count: 0, is_trashed: false, owner_user_id: m.userId });
    const x = await folder(m, 'X');
    await folder(m, 'Y');
    expect((await ok(m, 'drive_rename', { folder_id: x, name: 'Z' })).folder.name).toBe('Z');
    await refused(m, 'drive_rename', { folder_id: x, name: 'Y' }, 'name_taken');
    // Renaming to its own name is not a clash.
    await ok(m, 'drive_rename', { folder_id: x, name: 'Z' });
  });

  it('wants exactly one of file_id and folder_id, and a valid name', async () => {
    const m = await member();
    const fileId = await seedFile(m, 'a.txt', 'a');
    const f = await folder(m, 'F');
    await invalid(m, 'drive_rename', { name: 'n' }, 'file_id');
    await invalid(m, 'drive_rename', { file_id: fileId, folder_id: f, name: 'n' }, 'file_id');
    await invalid(m, 'drive_rename', { file_id: fileId, name: 'bad\u0001name' }, 'name');
  });

  it("answers not_found for another member's items", async () => {
    const m = await member();
    const stranger = await member();
    await refused(stranger, 'drive_rename', { file_id: await seedFile(m, 'a.txt', 'a'), name: 'mine' }, 'not_found');
    await refused(stranger, 'drive_rename', { folder_id: await folder(m, 'F'), name: 'mine' }, 'not_found');
    await refused(stranger, 'drive_rename', { file_id: 999_999, name: 'x' }, 'not_found');
  });
});

describe('drive_move', () => {
  it('moves files and folders, and back to the root with null', async () => {
    const m = await member();
    const a = await folder(m, 'A');
    const b = await folder(m, 'B');
    const fileId = await seedFile(m, 'f.txt', 'f');
    expect((await ok(m, 'drive_move', { file_id: fileId, folder_id: a })).file.folder_id).toBe(a);
    expect((await ok(m, 'drive_move', { folder_id: a, parent_id: b })).folder.parent_id).toBe(b);
    expect((await ok(m, 'drive_move', { folder_id: a, parent_id: null })).folder.parent_id).toBe(null);
    expect((await ok(m, 'drive_move', { file_id: fileId, folder_id: null })).file.folder_id).toBe(null);
    await invalid(m, 'drive_move', { file_id: fileId }, 'folder_id');
    await invalid(m, 'drive_move', { folder_id: a }, 'parent_id');
  });

  it('refuses a folder into itself or below itself (cycle)', async () => {
    const m = await member();
    const a = await folder(m, 'A');
    const b = await folder(m, 'B', a);
    const c = await folder(m, 'C', b);
    await refused(m, 'drive_move', { folder_id: a, parent_id: a }, 'cycle');
    await refused(m, 'drive_move', { folder_id: a, parent_id: c }, 'cycle');
    await ok(m, 'drive_move', { folder_id: c, parent_id: a });
  });

  it('refuses a move that would nest the tree deeper than drive_max_folder_depth (too_deep)', async () => {
    const m = await member();
    await t.services.settings.set('drive_max_folder_depth', 3);
    try {
      const a = await folder(m, 'A');
      const b = await folder(m, 'B', a);
      const c = await folder(m, 'C');
      await folder(m, 'D', c);
      // C with its child would sit at depth 3 and 4.
      await refused(m, 'drive_move', { folder_id: c, parent_id: b }, 'too_deep');
      await ok(m, 'drive_move', { folder_id: c, parent_id: a });
    } finally {
      await t.services.settings.set('drive_max_folder_depth', 32);
    }
  });

  it('refuses a destination with a folder of the same name (name_taken) and a missing destination (not_found)', async () => {
    const m = await member();
    const a = await folder(m, 'A');
    await folder(m, 'Same', a);
    const same = await folder(m, 'Same');
    await refused(m, 'drive_move', { folder_id: same, parent_id: a }, 'name_taken');
    await refused(m, 'drive_move', { folder_id: same, parent_id: 999_999 }, 'not_found');
  });
});

describe('trash, restore and delete forever', () => {
  it('trashes a file and restores it; trashing twice changes nothing', async () => {
    const m = await member();
    const fileId = await seedFile(m, 't.txt', 'trash me');
    const trashed = await ok(m, 'drive_trash', { file_id: fileId });
    expect(trashed.file.is_trashed).toBe(true);
    await ok(m, 'drive_trash', { file_id: fileId });
    const list = await ok(m, 'drive_list', { trashed: true });
    expect(list.files.map((f: { file_id: number }) => f.file_id)).toEqual([fileId]);
    expect((await ok(m, 'drive_list', {})).files).toEqual([]);
    const restored = await ok(m, 'drive_restore', { file_id: fileId });
    expect(restored.file.is_trashed).toBe(false);
    expect((await ok(m, 'drive_list', {})).files.map((f: { file_id: number }) => f.file_id)).toEqual([fileId]);
  });

  it('a trashed folder takes its contents along; an item restored from inside a still-trashed folder comes back at the root', async () => {
    const m = await member();
    const box = await folder(m, 'Box');
    const inside = await seedFile(m, 'inside.txt', 'in the box', box);
    await ok(m, 'drive_trash', { folder_id: box });
    const v = await ok(m, 'drive_versions', { file_id: inside });
    expect(v.file.is_trashed).toBe(true);
    expect((await ok(m, 'drive_list', { folder_id: box })).files[0]).toMatchObject({ file_id: inside, is_trashed: true });
    const back = await ok(m, 'drive_restore', { file_id: inside });
    expect(back.file).toMatchObject({ folder_id: null, is_trashed: false });
    const boxBack = await ok(m, 'drive_restore', { folder_id: box });
    expect(boxBack.folder.parent_id).toBe(null);
  });

  it('refuses to restore a folder whose name is now taken (name_taken)', async () => {
    const m = await member();
    const old = await folder(m, 'Reports');
    await ok(m, 'drive_trash', { folder_id: old });
    await folder(m, 'Reports');
    await refused(m, 'drive_restore', { folder_id: old }, 'name_taken');
  });

  it('deletes only what is in the trash (not_trashed), then frees the blob it no longer references', async () => {
    const m = await member();
    const content = `unique content ${Math.random()}`;
    const fileId = await seedFile(m, 'gone.txt', content);
    await seedVersion(m, fileId, `${content} v2`);
    await refused(m, 'drive_delete_forever', { file_id: fileId }, 'not_trashed');
    await ok(m, 'drive_trash', { file_id: fileId });
    const data = await ok(m, 'drive_delete_forever', { file_id: fileId });
    expect(data).toEqual({ file_id: fileId, deleted_files: 1, deleted_folders: 0 });
    expect((await blobRow(sha256Hex(content)))?.fbb_refcount ?? 0).toBe(0);
    expect((await blobRow(sha256Hex(`${content} v2`)))?.fbb_refcount ?? 0).toBe(0);
    const versions = await t.services.db.selectFrom('fvr_file_versions').select('fvr_file_version_id').where('fvr_fil_file_id', '=', fileId).execute();
    expect(versions).toEqual([]);
    await refused(m, 'drive_versions', { file_id: fileId }, 'not_found');
    await refused(m, 'drive_restore', { file_id: fileId }, 'not_found');

    // The bytes go with the blob sweep (after the unreferenced grace hour), the rows first.
    const store = t.services.driveStorage.blobs;
    const key = (await blobRow(sha256Hex(content)))!.fbb_storage_key;
    expect(await store.stat(key)).toEqual({ size: Buffer.byteLength(content) });
    t.clock.advanceSeconds(2 * 3600);
    try {
      const [outcome] = await t.services.scheduler.runNow('reconcile_drive_usage');
      expect(outcome).toMatchObject({ task: 'reconcile_drive_usage', result: { deleted_blobs: expect.any(Number) } });
      expect(await blobRow(sha256Hex(content))).toBe(undefined);
      expect(await blobRow(sha256Hex(`${content} v2`))).toBe(undefined);
      expect(await store.stat(key)).toBe(null);
    } finally {
      t.clock.set('2026-03-01T12:00:00Z');
    }
  });

  it("keeps a blob another file still references", async () => {
    const m = await member();
    const content = `shared bytes ${Math.random()}`;
    const a = await seedFile(m, 'a.txt', content);
    await seedFile(m, 'b.txt', content);
    expect((await blobRow(sha256Hex(content)))?.fbb_refcount).toBe(2);
    await ok(m, 'drive_trash', { file_id: a });
    await ok(m, 'drive_delete_forever', { file_id: a });
    expect((await blobRow(sha256Hex(content)))?.fbb_refcount).toBe(1);
  });

  it('deletes a trashed folder with everything below it', async () => {
    const m = await member();
    const top = await folder(m, 'Top');
    const sub = await folder(m, 'Sub', top);
    await seedFile(m, 'one.txt', 'one', top);
    await seedFile(m, 'two.txt', 'two', sub);
    await ok(m, 'drive_trash', { folder_id: top });
    const data = await ok(m, 'drive_delete_forever', { folder_id: top });
    expect(data).toEqual({ folder_id: top, deleted_files: 2, deleted_folders: 2 });
    expect((await ok(m, 'drive_list', { trashed: true })).num_results).toBe(0);
    await refused(m, 'drive_list', { folder_id: sub }, 'not_found');
  });
});

describe('drive_list', () => {
  it('pages folders first, then files, by name (numperpage defaults to 3)', async () => {
    const m = await member();
    await folder(m, 'b-folder');
    await folder(m, 'a-folder');
    for (const name of ['z.txt', 'c.txt', 'm.txt']) await seedFile(m, name, name);
    const first = await ok(m, 'drive_list', {});
    expect(first.num_results).toBe(5);
    expect(first.folders.map((f: { name: string }) => f.name)).toEqual(['a-folder', 'b-folder']);
    expect(first.files.map((f: { name: string }) => f.name)).toEqual(['c.txt']);
    const second = await ok(m, 'drive_list', { page: 1 });
    expect(second.folders).toEqual([]);
    expect(second.files.map((f: { name: string }) => f.name)).toEqual(['m.txt', 'z.txt']);
    const all = await ok(m, 'drive_list', { numperpage: 100 });
    expect(all.folders.length + all.files.length).toBe(5);
  });

  it("lists a folder's contents and refuses a folder the caller cannot see (not_found)", async () => {
    const m = await member();
    const f = await folder(m, 'F');
    const fileId = await seedFile(m, 'in.txt', 'in', f);
    const listing = await ok(m, 'drive_list', { folder_id: f });
    expect(listing).toEqual({ folders: [], files: [expect.objectContaining({ file_id: fileId, folder_id: f })], num_results: 1 });
    await refused(await member(), 'drive_list', { folder_id: f }, 'not_found');
  });
});

describe('grants: drive_shares and drive_share_sync', () => {
  it('sets the whole grant set by email (a user id only for a current grantee); anyone left out is revoked', async () => {
    const owner = await member();
    const viewer = await member();
    const editor = await member();
    const f = await folder(owner, 'Team');
    const synced = await ok(owner, 'drive_share_sync', { folder_id: f, grants: { [viewer.email.toUpperCase()]: 'viewer', [editor.email]: 'editor' } });
    expect(synced.grants).toEqual({ [String(viewer.userId)]: 'viewer', [String(editor.userId)]: 'editor' });
    // Only the addresses the owner shared with: no names.
    expect(synced.grantees).toEqual({ [String(viewer.userId)]: { email: viewer.email }, [String(editor.userId)]: { email: editor.email } });
    // The set read back (keyed by user id) can be sent again as it is.
    const resent = await ok(owner, 'drive_share_sync', { folder_id: f, grants: synced.grants });
    expect(resent.grants).toEqual(synced.grants);
    expect((await ok(owner, 'drive_shares', { folder_id: f })).grants).toEqual(synced.grants);

    // Both see the folder in what is shared with them, and its contents.
    const fileId = await seedFile(owner, 'plan.txt', 'the plan', f);
    for (const who of [viewer, editor]) {
      const shared = await ok(who, 'drive_list', { shared: true });
      expect(shared.folders.map((x: { folder_id: number }) => x.folder_id)).toEqual([f]);
      expect((await ok(who, 'drive_list', { folder_id: f })).files.map((x: { file_id: number }) => x.file_id)).toEqual([fileId]);
      expect((await ok(who, 'drive_versions', { file_id: fileId })).file.owner_user_id).toBe(owner.userId);
    }

    // Dropping the viewer from the set revokes them; the editor is demoted.
    const again = await ok(owner, 'drive_share_sync', { folder_id: f, grants: { [editor.email]: 'viewer' } });
    expect(again.grants).toEqual({ [String(editor.userId)]: 'viewer' });
    await refused(viewer, 'drive_list', { folder_id: f }, 'not_found');
    await refused(viewer, 'drive_versions', { file_id: fileId }, 'not_found');
    await refused(editor, 'drive_rename', { file_id: fileId, name: 'x' }, 'forbidden');

    // An empty set revokes everyone.
    expect((await ok(owner, 'drive_share_sync', { folder_id: f, grants: {} })).grants).toEqual({});
    await refused(editor, 'drive_list', { folder_id: f }, 'not_found');
  });

  it('a viewer cannot rename, move or trash; an editor can, within the shared folder', async () => {
    const owner = await member();
    const viewer = await member();
    const editor = await member();
    const shared = await folder(owner, 'Shared');
    const sub = await folder(owner, 'Sub', shared);
    const fileId = await seedFile(owner, 'doc.txt', 'doc', shared);
    await ok(owner, 'drive_share_sync', { folder_id: shared, grants: { [viewer.email]: 'viewer', [editor.email]: 'editor' } });

    await refused(viewer, 'drive_rename', { file_id: fileId, name: 'x.txt' }, 'forbidden');
    await refused(viewer, 'drive_move', { file_id: fileId, folder_id: sub }, 'forbidden');
    await refused(viewer, 'drive_trash', { file_id: fileId }, 'forbidden');
    await refused(viewer, 'drive_folder_create', { name: 'mine', parent_id: shared }, 'forbidden');

    expect((await ok(editor, 'drive_rename', { file_id: fileId, name: 'edited.txt' })).file.name).toBe('edited.txt');
    expect((await ok(editor, 'drive_move', { file_id: fileId, folder_id: sub })).file.folder_id).toBe(sub);
    // A folder an editor makes in the shared folder belongs to its owner.
    const made = await ok(editor, 'drive_folder_create', { name: 'By editor', parent_id: shared });
    const row = await t.services.db.selectFrom('fol_folders').select('fol_usr_user_id').where('fol_folder_id', '=', made.folder.folder_id).executeTakeFirstOrThrow();
    expect(row.fol_usr_user_id).toBe(owner.userId);
    // Not out of the owner's Drive, and not to the owner's root.
    const elsewhere = await folder(editor, 'Mine');
    await refused(editor, 'drive_move', { file_id: fileId, folder_id: elsewhere }, 'forbidden');
    await refused(editor, 'drive_move', { file_id: fileId, folder_id: null }, 'forbidden');
    // Sharing and deleting stay the owner's.
    await refused(editor, 'drive_share_sync', { file_id: fileId, grants: {} }, 'forbidden');
    await refused(editor, 'drive_shares', { file_id: fileId }, 'forbidden');
    await refused(editor, 'drive_link_create', { file_id: fileId }, 'forbidden');

    await ok(editor, 'drive_trash', { file_id: fileId });
    // A trashed item is gone for grantees; its owner finds it in their trash.
    await refused(editor, 'drive_versions', { file_id: fileId }, 'not_found');
    await refused(editor, 'drive_restore', { file_id: fileId }, 'not_found');
    expect((await ok(owner, 'drive_list', { trashed: true })).files.map((x: { file_id: number }) => x.file_id)).toEqual([fileId]);
  });

  it('a grant on one file reaches that file only', async () => {
    const owner = await member();
    const friend = await member();
    const a = await seedFile(owner, 'a.txt', 'a');
    const b = await seedFile(owner, 'b.txt', 'b');
    await ok(owner, 'drive_share_sync', { file_id: a, grants: { [friend.email]: 'viewer' } });
    expect((await ok(friend, 'drive_list', { shared: true })).files.map((x: { file_id: number }) => x.file_id)).toEqual([a]);
    await ok(friend, 'drive_versions', { file_id: a });
    await refused(friend, 'drive_versions', { file_id: b }, 'not_found');
  });

  it('refuses unknown grantees, bad roles and the owner (ValidationError), and strangers (not_found)', async () => {
    const owner = await member();
    const other = await member();
    const f = await folder(owner, 'F');
    await invalid(owner, 'drive_share_sync', { folder_id: f, grants: { 'nobody@example.com': 'viewer' } }, 'grants');
    // A bare user id of someone not shared with is refused: it would tell the caller who that account is.
    const byId = await t.request({ method: 'POST', url: '/api/v1/action/drive_share_sync', headers: owner.headers, payload: { folder_id: f, grants: { [String(other.userId)]: 'viewer' } } });
    expect(byId.statusCode).toBe(422);
    expect(byId.json.errortype).toBe('ValidationError');
    expect(byId.json.validation_errors).toEqual({ grants: `name the people you share with by their email address ('${other.userId}' is not someone this is shared with)` });
    expect(byId.body).not.toContain(other.email);
    await invalid(owner, 'drive_share_sync', { folder_id: f, grants: { [other.email]: 'owner' } }, 'grants');
    await invalid(owner, 'drive_share_sync', { folder_id: f, grants: { [owner.email]: 'editor' } }, 'grants');
    await invalid(owner, 'drive_share_sync', { folder_id: f }, 'grants');
    await invalid(owner, 'drive_share_sync', { folder_id: f, grants: 'everyone' }, 'grants');
    await refused(other, 'drive_share_sync', { folder_id: f, grants: {} }, 'not_found');
    await refused(other, 'drive_shares', { folder_id: f }, 'not_found');
    expect((await ok(owner, 'drive_shares', { folder_id: f })).grants).toEqual({});
  });
});

describe('links: drive_link_create and drive_link_revoke', () => {
  it('shows the token once, stores only its hash and an argon2id password hash, and lists the link', async () => {
    const m = await member(plus);
    const fileId = await seedFile(m, 'pub.txt', 'public');
    const data = await ok(m, 'drive_link_create', { file_id: fileId, expires_time: '2026-04-01 00:00:00', password: 'open sesame' });
    expect(data).toEqual({ link_id: expect.any(Number), url: expect.stringMatching(/^\/s\/[0-9a-f]{64}$/), expires_time: '2026-04-01 00:00:00' });
    const token = data.url.slice(3);
    const row = await t.services.db.selectFrom('fsl_file_share_links').selectAll().where('fsl_file_share_link_id', '=', data.link_id).executeTakeFirstOrThrow();
    expect(row.fsl_token_hash).toBe(sha256Hex(token));
    expect(row.fsl_password_hash).toMatch(/^\$argon2id\$/);
    expect(JSON.stringify(row)).not.toContain(token);
    const shares = await ok(m, 'drive_shares', { file_id: fileId });
    expect(shares.links).toEqual([{ link_id: data.link_id, create_time: '2026-03-01 12:00:00', expires_time: '2026-04-01 00:00:00', has_password: true }]);
    expect(JSON.stringify(shares)).not.toContain(token);

    const plain = await ok(m, 'drive_link_create', { file_id: fileId });
    expect(plain.expires_time).toBe(null);
    const revoked = await ok(m, 'drive_link_revoke', { link_id: data.link_id });
    expect(revoked).toEqual({ link_id: data.link_id, revoked: true });
    expect((await ok(m, 'drive_shares', { file_id: fileId })).links.map((l: { link_id: number }) => l.link_id)).toEqual([plain.link_id]);
    await refused(m, 'drive_link_revoke', { link_id: data.link_id }, 'not_found');
    await refused(await member(), 'drive_link_revoke', { link_id: plain.link_id }, 'not_found');
  });

  it('an Idempotency-Key keeps no link token: the stored answer is a marker, a retry is 409 and makes no second link', async () => {
    const m = await member(plus);
    const fileId = await seedFile(m, 'keyed.txt', 'keyed');
    const headers = { ...m.headers, 'idempotency-key': 'link-once' };
    const first = await t.request({ method: 'POST', url: action('drive_link_create'), headers, payload: { file_id: fileId } });
    expect(first.statusCode).toBe(200);
    const token: string = first.json.data.url.slice(3);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const rows = await t.services.db.selectFrom('aik_api_idempotency_keys').selectAll().where('aik_key_hash', '=', sha256Hex('link-once')).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ aik_action: 'drive_link_create', aik_state: 'stored', aik_body: 'secret-answer:v1' });
    expect(JSON.stringify(rows)).not.toContain(token);

    const retry = await t.request({ method: 'POST', url: action('drive_link_create'), headers, payload: { file_id: fileId } });
    expect([retry.statusCode, retry.json.errortype, retry.json.data]).toEqual([409, 'ActionError', { reason: 'secret_answer_not_kept' }]);
    const links = await t.services.db.selectFrom('fsl_file_share_links').select('fsl_file_share_link_id').where('fsl_fil_file_id', '=', fileId).execute();
    expect(links).toEqual([{ fsl_file_share_link_id: first.json.data.link_id }]);
  });

  it('refuses links without the tier feature drive_share_links (links_unavailable), tierless too', async () => {
    const withoutLinks = await member(basic);
    await refused(withoutLinks, 'drive_link_create', { file_id: await seedFile(withoutLinks, 'a.txt', 'a') }, 'links_unavailable');
    const tierless = await member(null);
    await refused(tierless, 'drive_link_create', { file_id: await seedFile(tierless, 'a.txt', 'a') }, 'links_unavailable');
  });

  it('refuses a past expiry and a short password (ValidationError), and trashed or foreign files (not_found)', async () => {
    const m = await member(plus);
    const fileId = await seedFile(m, 'a.txt', 'a');
    await invalid(m, 'drive_link_create', { file_id: fileId, expires_time: '2026-02-01 00:00:00' }, 'expires_time');
    await invalid(m, 'drive_link_create', { file_id: fileId, password: 'abc' }, 'password');
    await refused(await member(plus), 'drive_link_create', { file_id: fileId }, 'not_found');
    await ok(m, 'drive_trash', { file_id: fileId });
    await refused(m, 'drive_link_create', { file_id: fileId }, 'not_found');
  });

  it('deleting a file forever revokes its links', async () => {
    const m = await member(plus);
    const fileId = await seedFile(m, 'a.txt', 'a');
    const link = await ok(m, 'drive_link_create', { file_id: fileId });
    await ok(m, 'drive_trash', { file_id: fileId });
    await ok(m, 'drive_delete_forever', { file_id: fileId });
    const row = await t.services.db.selectFrom('fsl_file_share_links').select('fsl_revoked_time').where('fsl_file_share_link_id', '=', link.link_id).executeTakeFirstOrThrow();
    expect(row.fsl_revoked_time).not.toBe(null);
  });
});

describe('versions', () => {
  it('lists kept versions newest first and restores one; the current content becomes a version', async () => {
    const m = await member(plus);
    const fileId = await seedFile(m, 'v.txt', 'one');
    t.clock.advanceSeconds(60);
    await seedVersion(m, fileId, 'two!');
    t.clock.advanceSeconds(60);
    await seedVersion(m, fileId, 'three');
    const listed = await ok(m, 'drive_versions', { file_id: fileId });
    expect(listed.file).toMatchObject({ file_id: fileId, size_bytes: 5, sha256: sha256Hex('three'), version_count: 2 });
    expect(listed.versions.map((v: { sha256: string }) => v.sha256)).toEqual([sha256Hex('two!'), sha256Hex('one')]);
    expect(listed.versions[1]).toEqual({
      version_id: expect.any(Number),
      name: 'v.txt',
      size_bytes: 3,
      mime_type: 'text/plain',
      sha256: sha256Hex('one'),
      create_time: '2026-03-01 12:00:00',
      replaced_time: '2026-03-01 12:01:00',
    });
    const oldest = listed.versions[1].version_id;
    const restored = await ok(m, 'drive_version_restore', { file_id: fileId, version_id: oldest });
    expect(restored.file).toMatchObject({ sha256: sha256Hex('one'), size_bytes: 3, version_count: 3 });
    expect(restored.versions.map((v: { sha256: string }) => v.sha256)).toEqual([sha256Hex('three'), sha256Hex('two!'), sha256Hex('one')]);
    await refused(m, 'drive_version_restore', { file_id: fileId, version_id: 999_999 }, 'not_found');
  });

  it("prunes to the owner's drive_versioning_depth after a restore", async () => {
    const m = await member(basic);
    const fileId = await seedFile(m, 'v.txt', 'first');
    await seedVersion(m, fileId, 'second');
    const [only] = (await ok(m, 'drive_versions', { file_id: fileId })).versions;
    const restored = await ok(m, 'drive_version_restore', { file_id: fileId, version_id: only.version_id });
    expect(restored.versions.map((v: { sha256: string }) => v.sha256)).toEqual([sha256Hex('second')]);
  });

  it('refuses a restore that would put the owner over their storage (quota_exceeded), changing nothing', async () => {
    const m = await member(plus);
    const big = 'x'.repeat(400);
    const fileId = await seedFile(m, 'big.txt', big);
    await seedVersion(m, fileId, 'y'.repeat(400));
    // 800 of 1000 bytes used; restoring keeps both and adds the old one again as the current content.
    const [v] = (await ok(m, 'drive_versions', { file_id: fileId })).versions;
    const json = await refused(m, 'drive_version_restore', { file_id: fileId, version_id: v.version_id }, 'quota_exceeded');
    expect(json.data).toMatchObject({ usage_bytes: 800, storage_bytes: 1000 });
    const after = await ok(m, 'drive_versions', { file_id: fileId });
    expect(after.file.sha256).toBe(sha256Hex('y'.repeat(400)));
    expect(after.versions).toHaveLength(1);
  });

  it('a viewer sees versions but cannot restore (forbidden)', async () => {
    const owner = await member(plus);
    const viewer = await member();
    const fileId = await seedFile(owner, 'v.txt', 'a');
    await seedVersion(owner, fileId, 'b');
    await ok(owner, 'drive_share_sync', { file_id: fileId, grants: { [viewer.email]: 'viewer' } });
    const [v] = (await ok(viewer, 'drive_versions', { file_id: fileId })).versions;
    await refused(viewer, 'drive_version_restore', { file_id: fileId, version_id: v.version_id }, 'forbidden');
  });
});

describe('drive_changes', () => {
  it('reports a sequence of operations in order, continues from a cursor, and resets after 90 days', async () => {
    t.clock.set('2026-03-01T12:00:00Z');
    const m = await member(plus);
    const start = await ok(m, 'drive_changes', {});
    expect(start).toEqual({ changes: [], cursor: 0, reset: false });

    const f = await folder(m, 'Feed');
    const fileId = await seedFile(m, 'feed.txt', 'feed');
    await ok(m, 'drive_rename', { file_id: fileId, name: 'fed.txt' });
    await ok(m, 'drive_move', { file_id: fileId, folder_id: f });
    await ok(m, 'drive_trash', { file_id: fileId });
    await ok(m, 'drive_restore', { file_id: fileId });
    await ok(m, 'drive_share_sync', { folder_id: f, grants: { [(await member()).email]: 'viewer' } });
    // Another member's work never shows in this feed.
    await folder(await member(), 'Not mine');

    const all = await ok(m, 'drive_changes', {});
    expect(all.reset).toBe(false);
    expect(all.changes.map((c: { kind: string; file_id?: number; folder_id?: number }) => [c.kind, c.file_id ?? `folder ${c.folder_id}`])).toEqual([
      ['create', `folder ${f}`],
      ['create', fileId],
      ['rename', fileId],
      ['move', fileId],
      ['trash', fileId],
      ['restore', fileId],
      ['share', `folder ${f}`],
    ]);
    expect(all.changes[0]).toEqual({ cursor: expect.any(Number), kind: 'create', folder_id: f, time: '2026-03-01 12:00:00' });
    expect(all.cursor).toBe(all.changes[6].cursor);
    const cursors = all.changes.map((c: { cursor: number }) => c.cursor);
    expect([...cursors].sort((a, b) => a - b)).toEqual(cursors);

    const mid = await ok(m, 'drive_changes', { cursor: all.changes[3].cursor });
    expect(mid.changes.map((c: { kind: string }) => c.kind)).toEqual(['trash', 'restore', 'share']);
    expect(await ok(m, 'drive_changes', { cursor: all.cursor })).toEqual({ changes: [], cursor: all.cursor, reset: false });

    // 91 days on, a cursor from then is past the retained window: reset, with the newest cursor.
    t.clock.advance(91 * 86_400_000);
    try {
      await ok(m, 'drive_trash', { folder_id: f });
      const reset = await ok(m, 'drive_changes', { cursor: all.cursor });
      expect(reset.reset).toBe(true);
      expect(reset.changes).toEqual([]);
      expect(reset.cursor).toBeGreaterThan(all.cursor);
      // From the reset's cursor the feed goes on as usual.
      await ok(m, 'drive_rename', { folder_id: f, name: 'Feed 2' });
      const next = await ok(m, 'drive_changes', { cursor: reset.cursor });
      expect(next.reset).toBe(false);
      expect(next.changes.map((c: { kind: string }) => c.kind)).toEqual(['rename']);
      // A cursor that is not one of the caller's changes is a reset too.
      expect((await ok(await member(), 'drive_changes', { cursor: reset.cursor })).reset).toBe(true);
    } finally {
      t.clock.set('2026-03-01T12:00:00Z');
    }
  });
});

describe('drive_active', () => {
  it('every drive action answers 403 ActionError naming the setting while drive_active is off, and discovery omits them', async () => {
    const m = await member();
    const published = await t.request({ method: 'GET', url: '/api/v1/actions' });
    for (const name of DRIVE_ACTIONS) {
      expect([name, published.json.data[name]?.input]).toEqual([name, expect.any(Object)]);
    }
    await t.services.settings.set('drive_active', false);
    try {
      for (const name of DRIVE_ACTIONS) {
        const res = await call(m, name, {});
        expect([name, res.statusCode, res.json.errortype, res.json.data?.setting]).toEqual([name, 403, 'ActionError', 'drive_active']);
        // Before authentication: no key needed to learn that.
        const anonymous = await t.request({ method: 'POST', url: action(name), payload: {} });
        expect([name, anonymous.statusCode, anonymous.json.errortype]).toEqual([name, 403, 'ActionError']);
      }
      const discovery = await t.request({ method: 'GET', url: '/api/v1/actions' });
      for (const name of DRIVE_ACTIONS) expect([name, discovery.json.data[name]]).toEqual([name, undefined]);
    } finally {
      await t.services.settings.set('drive_active', true);
    }
  });
});
