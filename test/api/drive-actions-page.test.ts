import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { signIn, type WebClient } from '../helpers/browser-session.js';
import { createTier, type TestTier } from '../helpers/tiers.js';
import { createDriveApp } from './drive-upload-fixture.js';

// The /drive page as the server renders it: who may see it, the quota line (used of total, the tier's
// name, the upgrade link near the limit), and the controls each role gets. Content arrives the way the
// page's script sends it: drive_upload_init, one chunk, drive_upload_complete.

let t: TestApp;
let plus: TestTier;

beforeAll(async () => {
  t = await createDriveApp();
  plus = await createTier(t, {
    name: 'plusplan',
    displayName: 'Plus',
    level: 20,
    features: { drive_storage_bytes: 1000, drive_max_file_bytes: 1000, drive_share_links: true, drive_versioning_depth: 2 },
  });
});
afterAll(async () => t.close());

interface Member {
  userId: number;
  email: string;
  web: WebClient;
}

async function member(tier: TestTier | null = plus): Promise<Member> {
  const u = await t.createUser();
  if (tier) await t.services.tiers.membership.assignManually(u.userId, tier.tierId, null);
  return { userId: u.userId, email: u.email, web: await signIn(t, u.email, u.password) };
}

async function post(m: Member, name: string, payload: Record<string, unknown>) {
  const res = await m.web.api('POST', `/api/v1/action/${name}`, { payload });
  expect([name, res.statusCode, res.json.errortype]).toEqual([name, 200, undefined]);
  return res.json.data;
}

/** Uploads `content` as the page does: init, one chunk, complete. */
async function upload(m: Member, name: string, content: string, folderId?: number): Promise<number> {
  const bytes = Buffer.from(content);
  const init = await post(m, 'drive_upload_init', { name, size_bytes: bytes.length, mime_type: 'text/plain', ...(folderId ? { folder_id: folderId } : {}) });
  const put = await t.request({
    method: 'PUT',
    url: `/api/v1/drive_upload/${init.upload_token}`,
    headers: { cookie: m.web.jar.header(), 'x-service-csrf': m.web.csrf(), 'content-type': 'application/octet-stream', 'content-range': `bytes 0-${bytes.length - 1}/${bytes.length}` },
    payload: bytes,
  });
  expect(put.statusCode).toBe(200);
  return (await post(m, 'drive_upload_complete', { upload_token: init.upload_token })).file.file_id;
}

/** The data-op buttons of the row for that item. */
function opsOf(body: string, kind: 'file' | 'folder', id: number): string[] {
  const row = new RegExp(`<tr data-kind="${kind}" data-id="${id}"[\\s\\S]*?</tr>`).exec(body);
  expect(row, `row ${kind} ${id}`).not.toBe(null);
  return [...row![0].matchAll(/data-op="([a-z]+)"/g)].map((m) => m[1]!);
}

describe('GET /drive', () => {
  it('sends anonymous visitors to sign in, and answers 404 while drive_active is off', async () => {
    const anonymous = await t.request({ method: 'GET', url: '/drive' });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe('/login?next=%2Fdrive');
    const m = await member();
    await t.services.settings.set('drive_active', false);
    try {
      const off = await m.web.get('/drive');
      expect(off.statusCode).toBe(404);
      expect(off.body).toContain('Drive is not available on this site.');
    } finally {
      await t.services.settings.set('drive_active', true);
    }
  });

  it('shows used of total with the tier, and an upgrade link from 80% used', async () => {
    const m = await member();
    await upload(m, 'small.txt', 'x'.repeat(100));
    let page = await m.web.get('/drive');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<span id="quota-text"><strong>100 B</strong> of 1 kB used</span>');
    expect(page.body).toContain('<span id="quota-tier"><strong>Plus</strong> plan</span>');
    expect(page.body).not.toContain('id="upgrade-link"');
    expect(page.body).toContain('<meta name="service-api-csrf"');

    await upload(m, 'big.txt', 'y'.repeat(750));
    page = await m.web.get('/drive');
    expect(page.body).toContain('<strong>850 B</strong> of 1 kB used');
    expect(page.body).toMatch(/<a id="upgrade-link" href="\/profile\/subscription#change-tier">Running out of space\? Upgrade<\/a>/);
  });

  it('tells a tierless member they have no storage, with the upgrade link', async () => {
    const m = await member(null);
    const page = await m.web.get('/drive');
    expect(page.body).toContain('You have no plan with Drive storage.');
    expect(page.body).toContain('id="upgrade-link"');
  });

  it('lists folders and files with the owner controls, escapes names, and shows a folder with its path', async () => {
    const m = await member();
    const outer = (await post(m, 'drive_folder_create', { name: '<i>Outer & co' })).folder.folder_id;
    const inner = (await post(m, 'drive_folder_create', { name: 'Inner', parent_id: outer })).folder.folder_id;
    const fileId = await upload(m, 'notes.txt', 'hello', inner);
    const root = await m.web.get('/drive');
    expect(root.body).toContain('&lt;i&gt;Outer &amp; co');
    expect(root.body).not.toContain('<i>Outer & co');
    expect(opsOf(root.body, 'folder', outer)).toEqual(['rename', 'move', 'share', 'trash']);

    const inside = await m.web.get(`/drive?folder=${inner}`);
    expect(inside.body).toContain(`<a href="/drive?folder=${outer}">&lt;i&gt;Outer &amp; co</a> / <strong>Inner</strong>`);
    expect(opsOf(inside.body, 'file', fileId)).toEqual(['rename', 'versions', 'move', 'share', 'links', 'trash']);
    // The move dialog offers the top level and every folder outside the trash, by path.
    const gone = (await post(m, 'drive_folder_create', { name: 'Gone', parent_id: outer })).folder.folder_id;
    await post(m, 'drive_folder_create', { name: 'Below gone', parent_id: gone });
    await post(m, 'drive_trash', { folder_id: gone });
    const options = [...(await m.web.get(`/drive?folder=${inner}`)).body.matchAll(/<option value="(\d*)">([^<]*)<\/option>/g)].map((o) => [o[1], o[2]]);
    expect(options).toEqual([
      ['', 'My files (top level)'],
      [String(outer), '&lt;i&gt;Outer &amp; co'],
      [String(inner), '&lt;i&gt;Outer &amp; co / Inner'],
    ]);
    expect(inside.body).toContain(`<a class="download" href="/drive/file/${fileId}" download>notes.txt</a>`);
    expect(inside.body).toContain('id="upload-input"');

    await post(m, 'drive_trash', { file_id: fileId });
    const trash = await m.web.get('/drive?view=trash');
    expect(opsOf(trash.body, 'file', fileId)).toEqual(['restore', 'delete']);
    expect(trash.body).not.toContain('id="upload-input"');

    const missing = await m.web.get('/drive?folder=999999');
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toContain('id="not-found"');
    expect((await (await member()).web.get(`/drive?folder=${outer}`)).statusCode).toBe(404);
  });

  it('gives a viewer only viewing, an editor editing (but not sharing), in a shared folder', async () => {
    const owner = await member();
    const viewer = await member();
    const editor = await member();
    const shared = (await post(owner, 'drive_folder_create', { name: 'Team' })).folder.folder_id;
    const fileId = await upload(owner, 'plan.txt', 'the plan', shared);
    await post(owner, 'drive_share_sync', { folder_id: shared, grants: { [viewer.email]: 'viewer', [editor.email]: 'editor' } });

    const sharedList = await viewer.web.get('/drive?view=shared');
    expect(sharedList.body).toContain(`<a href="/drive?folder=${shared}">Team</a>`);
    expect(opsOf(sharedList.body, 'folder', shared)).toEqual([]);

    const asViewer = await viewer.web.get(`/drive?folder=${shared}`);
    expect(asViewer.statusCode).toBe(200);
    expect(opsOf(asViewer.body, 'file', fileId)).toEqual(['versions']);
    expect(asViewer.body).toContain(`<tr data-kind="file" data-id="${fileId}" data-name="plan.txt">`);
    expect(asViewer.body).not.toContain('id="upload-input"');
    expect(asViewer.body).toContain('<a href="/drive?view=shared">Shared with me</a> / <strong>Team</strong>');

    const asEditor = await editor.web.get(`/drive?folder=${shared}`);
    expect(opsOf(asEditor.body, 'file', fileId)).toEqual(['rename', 'versions', 'trash']);
    expect(asEditor.body).toContain(`<tr data-kind="file" data-id="${fileId}" data-name="plan.txt" data-can-edit="1">`);
    expect(asEditor.body).toContain('id="upload-input"');

    // What the editor uploads there is the owner's, billed to the owner.
    const added = await upload(editor, 'from editor.txt', 'e'.repeat(42), shared);
    const row = await t.services.db.selectFrom('fil_files').select(['fil_usr_user_id', 'fil_fol_folder_id']).where('fil_file_id', '=', added).executeTakeFirstOrThrow();
    expect(row).toEqual({ fil_usr_user_id: owner.userId, fil_fol_folder_id: shared });
    expect((await owner.web.get('/drive')).body).toContain('<strong>50 B</strong> of 1 kB used');
    expect((await editor.web.get('/drive')).body).toContain('<strong>0 B</strong> of 1 kB used');
  });
});
