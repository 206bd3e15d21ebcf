import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, type WebClient } from '../helpers/browser-session.js';
import { createTier } from '../helpers/tiers.js';

// Admin → Import and export members (DESIGN 16): upload a CSV, preview it, run it with a progress bar
// (the page polls the job), and download every member in the same columns.

let t: TestApp;
let staff: WebClient;
const base = '/admin/members/import';

beforeAll(async () => {
  t = await createTestApp();
  await createTier(t, { name: 'gold', displayName: 'Gold Tier', level: 20 });
  const s = await t.createUser({ permission: 5 });
  staff = await signIn(t, s.email, s.password);
});
afterAll(async () => t.close());

const uploadToken = (html: string) => /id="upload-form"[^>]*data-token="([0-9a-f]+)"/.exec(html)![1]!;

async function uploadFile(body: Buffer | string, token: string, name = 'members.csv') {
  return t.request({
    method: 'POST',
    url: `${base}/upload`,
    headers: { cookie: staff.jar.header(), 'content-type': 'application/octet-stream', 'x-form-token': token, 'x-file-name': encodeURIComponent(name) },
    payload: Buffer.from(body),
  });
}

describe('admin member import page', () => {
  it('is for staff only', async () => {
    const m = await t.createUser();
    const member = await signIn(t, m.email, m.password);
    expect((await member.get(base)).statusCode).toBe(403);
    expect((await member.get('/admin/members/export.csv')).statusCode).toBe(403);
  });

  it('uploads a CSV, previews each row, runs it to the end and shows the report', async () => {
    const page = await staff.get(base);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('id="export-link" href="/admin/members/export.csv"');
    const token = uploadToken(page.body);
    expect((await uploadFile('email\nx@example.com\n', 'wrong')).statusCode).toBe(403);

    const up = await uploadFile('email,name,tiers,gift_id\nweb-one@example.com,Web One,Gold Tier,\nweb-two@example.com,Web Two,,\nbad-address,Nope,,\n', token);
    expect(up.statusCode, up.body).toBe(200);
    expect(up.json.preview_url).toBe(`${base}?upload=${up.json.upload}`);

    const preview = await staff.get(up.json.preview_url);
    expect(preview.statusCode).toBe(200);
    expect(preview.body).toMatch(/id="preview-counts">3 rows: <span class="count-create">2 to create<\/span>/);
    expect(preview.body).toContain('Columns ignored (not known here): gift_id.');
    expect(preview.body).toMatch(/<tr data-line="4" data-outcome="error">.*bad-address&#39; is not an email address/s);

    const run = await staff.postForm(`${base}/run`, { upload: String(up.json.upload), form_token: staff.formToken(preview.body, `${base}/run`) });
    expect(run.statusCode).toBe(303);
    const jobUrl = run.headers.location as string;
    expect(jobUrl).toMatch(/^\/admin\/members\/import\/jobs\/\d+$/);
    let status: any;
    for (let i = 0; i < 2000; i++) {
      status = (await staff.get(`${jobUrl}/status`)).json;
      if (status.ended) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(status).toMatchObject({ status: 'done', progress: 1, rows: 3, counts: { create: 2, update: 0, unchanged: 0, error: 1 }, ended: true });
    const job = await staff.get(jobUrl);
    expect(job.body).toContain('<progress id="import-progress" max="100" value="100" style="width:100%;height:1.25rem">100%</progress>');
    expect(job.body).toMatch(/id="job-errors".*bad-address/s);

    const csv = await staff.get('/admin/members/export.csv');
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toMatch(/^attachment; filename="members-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = csv.body.trim().split('\r\n');
    expect(lines[0]).toBe('id,email,name,note,subscribed_to_emails,complimentary_plan,stripe_customer_id,created_at,deleted_at,labels,tiers');
    expect(lines.find((l) => l.includes('web-one@example.com'))).toMatch(/,web-one@example\.com,Web One,,false,true,,[^,]+,,,Gold Tier$/);
  });

  it('a file that is not CSV is refused on its preview', async () => {
    const token = uploadToken((await staff.get(base)).body);
    const up = await uploadFile(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01]), token, 'logo.png');
    const preview = await staff.get(up.json.preview_url);
    expect(preview.statusCode).toBe(422);
    expect(preview.body).toContain('<p class="error" id="import-error" role="alert">logo.png is not a member CSV: line 1: bytes that are not UTF-8 text</p>');
  });
});
