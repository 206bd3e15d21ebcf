import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProduct, itemFor, setStoreActive } from '../helpers/store.js';
import { FakeStripe } from '../helpers/providers/fake-stripe.js';
import { changeRows, createTier, type TestTier } from '../helpers/tiers.js';
import { action, createDriveApp, upload, type DriveApp } from './drive-upload-fixture.js';

// Member CSV import (DESIGN 16) through the real app: the file arrives through the upload endpoints with
// purpose member_import, member_import_preview says per row what would happen, member_import_run queues a
// job that the member_import task starts, and member_import_status follows it to its report.

const GHOST_HEADER = 'id,email,name,note,subscribed_to_emails,complimentary_plan,stripe_customer_id,created_at,deleted_at,labels,tiers';

let t: DriveApp;
let staff: { headers: Record<string, string>; userId: number };
let gold: TestTier;
let silver: TestTier;
const stripe = new FakeStripe();

beforeAll(async () => {
  t = await createDriveApp();
  staff = await t.staffHeaders();
  silver = await createTier(t, { name: 'silver', displayName: 'Silver Circle', level: 10 });
  gold = await createTier(t, { name: 'gold', displayName: 'Gold Tier', level: 20 });
  // Gold is sold (so it is the paid tier a complimentary member without a named tier joins).
  await createProduct(t, { tierId: gold.tierId, refs: { pro_card_price_id: 'price_gold_monthly' } });
  await stripe.start();
});
afterAll(async () => {
  await stripe.stop();
  await t.close();
});

async function uploadCsv(text: string | Buffer, headers = staff.headers): Promise<number> {
  const res = await upload(t, headers, Buffer.isBuffer(text) ? text : Buffer.from(text), { purpose: 'member_import', name: 'members.csv', mime_type: 'text/csv' });
  expect(res.statusCode, res.body).toBe(200);
  return res.json.data.file.id;
}

async function runToEnd(fileId: number, options: Record<string, unknown> = {}) {
  const queued = await action(t, staff.headers, 'member_import_run', { upload: fileId, options });
  expect(queued.statusCode, queued.body).toBe(200);
  expect(queued.json.data.job).toMatchObject({ status: 'queued', file_id: fileId, progress: 0 });
  const jobId = queued.json.data.job.job_id;
  const [picked] = await t.services.scheduler.runNow('member_import');
  expect(picked).toEqual({ task: 'member_import', result: { started: [jobId] } });
  for (let i = 0; i < 3000; i++) {
    const status = await action(t, staff.headers, 'member_import_status', { job_id: jobId });
    expect(status.statusCode, status.body).toBe(200);
    const job = status.json.data.job;
    if (job.status === 'done' || job.status === 'failed') return job;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the import job did not end');
}

const userByEmail = (email: string) =>
  t.services.db.selectFrom('usr_users').selectAll().where('usr_email', '=', email).where('usr_delete_time', 'is', null).executeTakeFirst();

async function membership(userId: number) {
  return t.services.db
    .selectFrom('grm_group_members')
    .select(['grm_sbt_subscription_tier_id', 'grm_assignment_method'])
    .where('grm_foreign_key_id', '=', userId)
    .where('grm_sbt_subscription_tier_id', 'is not', null)
    .execute();
}

const userCount = async () => Number((await t.services.db.selectFrom('usr_users').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

describe('member import: the upload purpose', () => {
  it('member_import uploads are for staff only', async () => {
    const member = await t.keyHeaders();
    const res = await action(t, member.headers, 'drive_upload_init', { purpose: 'member_import', name: 'm.csv', size_bytes: 10 });
    expect(res.statusCode).toBe(403);
    expect(res.json.errortype).toBe('AuthenticationError');
    const preview = await action(t, member.headers, 'member_import_preview', { upload: 1 });
    expect(preview.statusCode).toBe(403);
    expect(preview.json.errortype).toBe('AuthenticationError');
  });

  it('a file that is not a CSV is refused with 422 ValidationError on upload, and nothing is queued', async () => {
    const png = await uploadCsv(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0xff, 0xd8]));
    for (const name of ['member_import_preview', 'member_import_run']) {
      const res = await action(t, staff.headers, name, { upload: png });
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json.errortype).toBe('ValidationError');
      expect(res.json.validation_errors.upload).toMatch(/^is not a member CSV: line 1: /);
    }
    const noEmail = await uploadCsv('name,note\nAda,hello\n');
    const res = await action(t, staff.headers, 'member_import_run', { upload: noEmail });
    expect(res.statusCode).toBe(422);
    expect(res.json.validation_errors).toEqual({ upload: "is not a member CSV: the first line names no 'email' column (it has: name, note)" });
    expect(await t.services.scheduler.runNow('member_import')).toEqual([{ task: 'member_import', result: { started: [] } }]);
  });

  it("another staff member's upload is not found", async () => {
    const other = await t.staffHeaders();
    const fileId = await uploadCsv('email\nx@example.com\n', other.headers);
    const res = await action(t, staff.headers, 'member_import_preview', { upload: fileId });
    expect(res.statusCode).toBe(422);
    expect(res.json.errortype).toBe('ActionError');
    expect(res.json.data).toEqual({ reason: 'not_found' });
  });
});

describe('member import: preview, run, and a second run', () => {
  let fileId: number;
  let existingId: number;
  let unchangedEmail: string;
  const csv = () =>
    [
      `${GHOST_HEADER},gift_id`,
      '5f1,ada@example.com,Ada Lovelace,a note,true,false,,2024-01-02T03:04:05.000Z,,"vip, early",gold,',
      '5f2,grace@example.com,Grace Hopper,,false,false,,,,,Silver Circle,',
      '5f3,comp@example.com,Comped Member,,true,true,,,,,,',
      '5f4,,No Email,,,,,,,,,',
      '5f5,not-an-email,Bad Address,,,,,,,,,',
      '5f6,tin@example.com,Tin Man,,,,,,,,platinum,',
      '5f7,ADA@example.com,Ada Again,,,,,,,,,',
      `5f8,${'existing@example.com'},Renamed Person,,,,,,,,,`,
      `5f9,${unchangedEmail},Test Same,,,,,,,,,`,
    ].join('\r\n') + '\r\n';

  beforeAll(async () => {
    existingId = (await t.createUser({ email: 'existing@example.com', firstName: 'Old', lastName: 'Name' })).userId;
    unchangedEmail = (await t.createUser({ firstName: 'Test', lastName: 'Same' })).email;
    fileId = await uploadCsv(csv());
  });

  it('preview reports each row: create, update, unchanged, and each bad row with its reason; nothing changes', async () => {
    const before = await userCount();
    const res = await action(t, staff.headers, 'member_import_preview', { upload: fileId });
    expect(res.statusCode, res.body).toBe(200);
    const d = res.json.data;
    expect(d).toMatchObject({
      upload: fileId,
      dry_run: true,
      rows: 9,
      counts: { create: 3, update: 1, unchanged: 1, error: 4 },
      unknown_columns: ['gift_id'],
      not_carried: ['id', 'note', 'deleted_at', 'labels'],
      errors_truncated: false,
    });
    expect(d.errors).toEqual([
      { line: 5, email: '', outcome: 'error', reason: 'no_email', message: 'The row has no email address' },
      { line: 6, email: 'not-an-email', outcome: 'error', reason: 'malformed_email', message: "'not-an-email' is not an email address" },
      { line: 7, email: 'tin@example.com', outcome: 'error', reason: 'unknown_tier', message: "No active tier is named 'platinum'" },
      { line: 8, email: 'ADA@example.com', outcome: 'error', reason: 'duplicate_email', message: 'ADA@example.com is already on an earlier line of the file' },
    ]);
    const byLine = Object.fromEntries(d.rows_listed.map((r: { line: number }) => [r.line, r]));
    expect(byLine[2]).toEqual({ line: 2, email: 'ada@example.com', outcome: 'create', changes: ['name', 'subscribed_to_emails', 'tier'], tier: 'Gold Tier' });
    expect(byLine[3]).toMatchObject({ outcome: 'create', tier: 'Silver Circle' });
    expect(byLine[4]).toMatchObject({ outcome: 'create', tier: 'Gold Tier' });
    expect(byLine[9]).toEqual({ line: 9, email: 'existing@example.com', outcome: 'update', changes: ['name'], tier: null });
    expect(byLine[10]).toMatchObject({ outcome: 'unchanged', changes: [] });
    expect(await userCount()).toBe(before);
    expect(await userByEmail('ada@example.com')).toBeUndefined();
  });

  it('run applies the good rows in batches with progress, skips the bad ones, and imports no password', async () => {
    const job = await runToEnd(fileId);
    expect(job).toMatchObject({ status: 'done', progress: 1, rows: 9, counts: { create: 3, update: 1, unchanged: 1, error: 4 }, error: null });
    expect(job.bytes_done).toBe(job.bytes_total);
    expect(job.report.errors.map((e: { reason: string }) => e.reason)).toEqual(['no_email', 'malformed_email', 'unknown_tier', 'duplicate_email']);

    const ada = (await userByEmail('ada@example.com'))!;
    expect(ada).toMatchObject({ usr_first_name: 'Ada', usr_last_name: 'Lovelace', usr_password: null, usr_contact_preferences: 'email', usr_permission: 0 });
    expect(ada.usr_create_time.toISOString()).toBe('2024-01-02T03:04:05.000Z');
    // By name (gold) and by display name (Silver Circle), and complimentary_plan: manual assignments.
    expect(await membership(ada.usr_user_id)).toEqual([{ grm_sbt_subscription_tier_id: gold.tierId, grm_assignment_method: 'manual' }]);
    const grace = (await userByEmail('grace@example.com'))!;
    expect(await membership(grace.usr_user_id)).toEqual([{ grm_sbt_subscription_tier_id: silver.tierId, grm_assignment_method: 'manual' }]);
    expect(grace.usr_contact_preferences).toBeNull();
    const comp = (await userByEmail('comp@example.com'))!;
    expect(await membership(comp.usr_user_id)).toEqual([{ grm_sbt_subscription_tier_id: gold.tierId, grm_assignment_method: 'manual' }]);
    const [change] = await changeRows(t, ada.usr_user_id);
    expect(change).toMatchObject({ cht_change_reason: 'manual', cht_new_value: String(gold.tierId), cht_changed_by_usr_user_id: staff.userId });
    expect(JSON.parse(change!.cht_metadata!)).toMatchObject({ how: 'import', new_tier: 'gold' });

    expect(await userByEmail('tin@example.com')).toBeUndefined();
    expect((await userByEmail('existing@example.com'))).toMatchObject({ usr_user_id: existingId, usr_first_name: 'Renamed', usr_last_name: 'Person' });
  });

  it('a second run of the same file changes nothing', async () => {
    const users = await userCount();
    const ada = (await userByEmail('ada@example.com'))!;
    const changes = (await changeRows(t, ada.usr_user_id)).length;
    const job = await runToEnd(fileId);
    expect(job).toMatchObject({ status: 'done', rows: 9, counts: { create: 0, update: 0, unchanged: 5, error: 4 } });
    expect(await userCount()).toBe(users);
    expect(await changeRows(t, ada.usr_user_id)).toHaveLength(changes);
  });

  it('options.dry_run runs as a job that only reports', async () => {
    const fresh = await uploadCsv('email,name\nnew-dry@example.com,Dry Run\n');
    const job = await runToEnd(fresh, { dry_run: true });
    expect(job).toMatchObject({ status: 'done', dry_run: true, counts: { create: 1, update: 0, unchanged: 0, error: 0 } });
    expect(await userByEmail('new-dry@example.com')).toBeUndefined();
  });
});

describe('member import: a card processor customer', () => {
  beforeAll(async () => {
    await setStoreActive(t, true);
    await t.services.settings.set('card_processor_api_key', 'sk_test_import');
    await t.services.settings.set('card_processor_api_base', stripe.base);
  });
  afterAll(async () => setStoreActive(t, false));

  it('is linked to the member, and its live subscription is granted through the one grant path', async () => {
    const periodEnd = Math.floor(t.clock.now().getTime() / 1000) + 20 * 86400;
    const sub = stripe.addSubscription('sub_import_live', 'price_gold_monthly', periodEnd);
    sub.customer = 'cus_Import1';
    const ended = stripe.addSubscription('sub_import_ended', 'price_gold_monthly', periodEnd);
    ended.customer = 'cus_Import1';
    ended.status = 'canceled';
    const fileId = await uploadCsv(`${GHOST_HEADER}\n,paying@example.com,Paying Member,,true,false,cus_Import1,,,,Gold Tier\n`);

    const job = await runToEnd(fileId);
    expect(job).toMatchObject({ status: 'done', counts: { create: 1, update: 0, unchanged: 0, error: 0 } });
    expect(job.report.listed).toEqual([]);
    const user = (await userByEmail('paying@example.com'))!;
    expect(user.usr_stripe_customer_id).toBe('cus_Import1');
    // The manual assignment of the named tier, then the subscription's purchase: the same tier, now bought.
    expect(await membership(user.usr_user_id)).toEqual([{ grm_sbt_subscription_tier_id: gold.tierId, grm_assignment_method: 'purchase' }]);
    const item = await itemFor(t, 'card_processor', 'sub_import_live');
    expect(item).toMatchObject({ odi_usr_user_id: user.usr_user_id, odi_subscription_status: 'active' });
    expect(await itemFor(t, 'card_processor', 'sub_import_ended')).toBeUndefined();
    const rows = await changeRows(t, user.usr_user_id);
    expect(rows.map((r) => r.cht_change_reason)).toEqual(['manual', 'purchase']);
    expect(JSON.parse(rows[1]!.cht_metadata!)).toMatchObject({ source: 'card_processor', how: 'import' });

    // Again: the customer is linked and its subscription recorded, so nothing changes.
    const again = await runToEnd(fileId);
    expect(again.counts).toEqual({ create: 0, update: 0, unchanged: 1, error: 0 });
    expect(await changeRows(t, user.usr_user_id)).toHaveLength(2);
  });

  it('a customer the processor cannot be read for skips the row whole', async () => {
    await t.services.settings.set('card_processor_api_base', 'http://127.0.0.1:9');
    try {
      const fileId = await uploadCsv('email,stripe_customer_id,tiers\nunreachable@example.com,cus_Nowhere,gold\n');
      const job = await runToEnd(fileId);
      expect(job.counts).toEqual({ create: 0, update: 0, unchanged: 0, error: 1 });
      expect(job.report.errors[0]).toMatchObject({ line: 2, reason: 'card_processor_unreachable' });
      expect(await userByEmail('unreachable@example.com')).toBeUndefined();
    } finally {
      await t.services.settings.set('card_processor_api_base', stripe.base);
    }
  });
});
