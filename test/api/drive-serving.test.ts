import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentDisposition, parseRange } from '../../src/drive/serving.js';
import { signIn, webClient, type WebClient } from '../helpers/browser-session.js';
import { action, content, createDriveApp, memberWithLogin, PLAN, upload, type DriveApp } from './drive-upload-fixture.js';

describe('Drive serving: /drive/file/{id} and /s/{token}', () => {
  let t: DriveApp;
  let owner: Awaited<ReturnType<typeof memberWithLogin>>;
  let ownerWeb: WebClient;
  const bytes = content(1000, 'served');
  const name = 'naïve "quote";%.html';
  let fileId: number;

  beforeAll(async () => {
    t = await createDriveApp();
    owner = await memberWithLogin(t, PLAN);
    const made = await upload(t, owner.headers, bytes, { name, mime_type: 'text/html' });
    fileId = made.json.data.file.file_id;
    ownerWeb = await signIn(t, owner.email, owner.password);
  });
  afterAll(async () => {
    await t?.close();
  });

  const expectServedHeaders = (res: { headers: Record<string, unknown> }) => {
    expect(res.headers['content-type']).toBe('text/html');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="na_ve _quote___.html"; filename*=UTF-8''na%C3%AFve%20%22quote%22%3B%25.html`);
    expect(res.headers['content-security-policy']).toBe("default-src 'none'; sandbox allow-downloads");
    expect(res.headers['accept-ranges']).toBe('bytes');
  };

  it('streams the file to its signed-in owner with the stored type, nosniff and an attachment filename', async () => {
    const res = await ownerWeb.get(`/drive/file/${fileId}`);
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(bytes)).toBe(true);
    expect(res.headers['content-length']).toBe('1000');
    expectServedHeaders(res);
  });

  it('answers Range with 206 and the slice, and an unsatisfiable one with 416', async () => {
    const mid = await ownerWeb.get(`/drive/file/${fileId}`, { range: 'bytes=10-19' });
    expect(mid.statusCode).toBe(206);
    expect(mid.headers['content-range']).toBe('bytes 10-19/1000');
    expect(mid.rawPayload.equals(bytes.subarray(10, 20))).toBe(true);
    const tail = await ownerWeb.get(`/drive/file/${fileId}`, { range: 'bytes=-5' });
    expect(tail.statusCode).toBe(206);
    expect(tail.rawPayload.equals(bytes.subarray(995))).toBe(true);
    const open = await ownerWeb.get(`/drive/file/${fileId}`, { range: 'bytes=990-' });
    expect(open.headers['content-range']).toBe('bytes 990-999/1000');
    const beyond = await ownerWeb.get(`/drive/file/${fileId}`, { range: 'bytes=1000-' });
    expect(beyond.statusCode).toBe(416);
    expect(beyond.headers['content-range']).toBe('bytes */1000');
    expect(beyond.rawPayload.length).toBe(0);
  });

  it('sends anonymous visitors to sign in and hides the file from members without a grant until one is given', async () => {
    const anonymous = await webClient(t).get(`/drive/file/${fileId}`);
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe(`/login?next=${encodeURIComponent(`/drive/file/${fileId}`)}`);
    // Key headers are not a browser session.
    const byKey = await t.request({ method: 'GET', url: `/drive/file/${fileId}`, headers: owner.headers });
    expect(byKey.statusCode).toBe(303);

    const other = await memberWithLogin(t, PLAN);
    const otherWeb = await signIn(t, other.email, other.password);
    expect((await otherWeb.get(`/drive/file/${fileId}`)).statusCode).toBe(404);
    expect((await otherWeb.get('/drive/file/999999')).statusCode).toBe(404);
    const shared = await action(t, owner.headers, 'drive_share_sync', { file_id: fileId, grants: { [other.email]: 'viewer' } });
    expect(shared.statusCode).toBe(200);
    const granted = await otherWeb.get(`/drive/file/${fileId}`);
    expect(granted.statusCode).toBe(200);
    expect(granted.rawPayload.equals(bytes)).toBe(true);
    await action(t, owner.headers, 'drive_share_sync', { file_id: fileId, grants: {} });
    expect((await otherWeb.get(`/drive/file/${fileId}`)).statusCode).toBe(404);
  });

  it('serves a public link with Range, stops at its expiry and when revoked', async () => {
    const created = await action(t, owner.headers, 'drive_link_create', { file_id: fileId, expires_time: '2026-03-01 13:00:00' });
    expect(created.statusCode).toBe(200);
    const url = created.json.data.url as string;
    expect(url).toMatch(/^\/s\/[0-9a-f]{64}$/);
    const visitor = webClient(t);
    const res = await visitor.get(url);
    expect(res.statusCode).toBe(200);
    expect(res.rawPayload.equals(bytes)).toBe(true);
    expectServedHeaders(res);
    const part = await visitor.get(url, { range: 'bytes=0-0' });
    expect(part.statusCode).toBe(206);
    expect(part.rawPayload.equals(bytes.subarray(0, 1))).toBe(true);
    expect((await visitor.get(`/s/${'0'.repeat(64)}`)).statusCode).toBe(404);

    t.clock.advanceSeconds(3601);
    try {
      expect((await visitor.get(url)).statusCode).toBe(404);
    } finally {
      t.clock.advanceSeconds(-3601);
    }
    expect((await visitor.get(url)).statusCode).toBe(200);
    const revoked = await action(t, owner.headers, 'drive_link_revoke', { link_id: created.json.data.link_id });
    expect(revoked.statusCode).toBe(200);
    expect((await visitor.get(url)).statusCode).toBe(404);
  });

  it("stops serving the links of a disabled or deleted owner, answering as for a missing link", async () => {
    const other = await memberWithLogin(t, PLAN);
    const made = await upload(t, other.headers, content(300, 'leaver'), { name: 'leaver.txt', mime_type: 'text/plain' });
    const created = await action(t, other.headers, 'drive_link_create', { file_id: made.json.data.file.file_id });
    const url = created.json.data.url as string;
    const visitor = webClient(t, '10.0.0.31');
    expect((await visitor.get(url)).statusCode).toBe(200);
    const missing = await visitor.get(`/s/${'1'.repeat(64)}`);
    expect(missing.statusCode).toBe(404);
    const setUser = (values: { usr_is_disabled?: boolean; usr_delete_time?: Date | null }) =>
      t.services.db.updateTable('usr_users').set(values).where('usr_user_id', '=', other.userId).execute();

    await setUser({ usr_is_disabled: true });
    const disabled = await visitor.get(url);
    expect(disabled.statusCode).toBe(404);
    expect(disabled.body).toBe(missing.body);
    await setUser({ usr_is_disabled: false });
    expect((await visitor.get(url)).statusCode).toBe(200);
    await setUser({ usr_delete_time: t.clock.now() });
    const deleted = await visitor.get(url);
    expect(deleted.statusCode).toBe(404);
    expect(deleted.body).toBe(missing.body);
  });

  it('asks for a link password (argon2id) before serving, and remembers it in that browser only', async () => {
    const created = await action(t, owner.headers, 'drive_link_create', { file_id: fileId, password: 'open sesame' });
    const url = created.json.data.url as string;
    const visitor = webClient(t, '10.0.0.9');
    const prompt = await visitor.get(url);
    expect(prompt.statusCode).toBe(200);
    expect(prompt.headers['content-type']).toMatch(/^text\/html/);
    expect(prompt.headers['content-disposition']).toBeUndefined();
    expect(prompt.body).toContain('type="password"');
    const stored = await t.services.db.selectFrom('fsl_file_share_links').select('fsl_password_hash').where('fsl_file_share_link_id', '=', created.json.data.link_id).executeTakeFirstOrThrow();
    expect(stored.fsl_password_hash).toMatch(/^\$argon2id\$/);

    const formToken = visitor.formToken(prompt.body, url);
    const wrong = await visitor.postForm(url, { password: 'guess', form_token: formToken });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.body).toContain('That password is not right.');
    const right = await visitor.postForm(url, { password: 'open sesame', form_token: formToken });
    expect(right.statusCode).toBe(303);
    expect(right.headers.location).toBe(url);
    const served = await visitor.get(url);
    expect(served.statusCode).toBe(200);
    expect(served.rawPayload.equals(bytes)).toBe(true);
    // Another browser is still asked.
    const stranger = await webClient(t, '10.0.0.10').get(url);
    expect(stranger.body).toContain('type="password"');
    // A forged unlock cookie does not open it.
    const forged = await t.request({ method: 'GET', url, headers: { cookie: `gh_link_${created.json.data.link_id}=9999999999999.${'a'.repeat(64)}` } });
    expect(forged.body).toContain('type="password"');
  });

  it('serves nothing while drive_active is off', async () => {
    const created = await action(t, owner.headers, 'drive_link_create', { file_id: fileId });
    await t.services.settings.set('drive_active', false);
    try {
      expect((await ownerWeb.get(`/drive/file/${fileId}`)).statusCode).toBe(404);
      expect((await webClient(t).get(created.json.data.url)).statusCode).toBe(404);
    } finally {
      await t.services.settings.set('drive_active', true);
    }
  });
});

describe('Range and Content-Disposition rules', () => {
  it('parses single byte ranges and refuses the unsatisfiable', () => {
    expect(parseRange(undefined, 100)).toBeNull();
    expect(parseRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
    expect(parseRange('bytes=90-200', 100)).toEqual({ start: 90, end: 99 });
    expect(parseRange('bytes=-200', 100)).toEqual({ start: 0, end: 99 });
    expect(parseRange('bytes=0-1,5-6', 100)).toBeNull();
    expect(parseRange('items=0-1', 100)).toBeNull();
    expect(parseRange('bytes=100-', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=5-4', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=-0', 100)).toBe('unsatisfiable');
    expect(parseRange('bytes=0-', 0)).toBe('unsatisfiable');
  });

  it('never lets a name break out of the header', () => {
    expect(contentDisposition('a\r\nSet-Cookie: x=1.txt')).toBe(`attachment; filename="aSet-Cookie: x=1.txt"; filename*=UTF-8''aSet-Cookie%3A%20x%3D1.txt`);
    expect(contentDisposition('')).toBe(`attachment; filename="download"; filename*=UTF-8''download`);
    expect(contentDisposition("it's (1)*.txt")).toBe(`attachment; filename="it's (1)*.txt"; filename*=UTF-8''it%27s%20%281%29%2A.txt`);
  });
});
