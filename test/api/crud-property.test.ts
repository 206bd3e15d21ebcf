import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { models } from '../../src/models/index.js';
import { FLOORED_NAME } from '../../src/surfaces/crud/fields.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// Random field names and values thrown at POST and PUT: never a 5xx, never a floored or privilege
// column written, never a floored column exported.
const FLOORED_USER_COLUMNS = ['usr_password', 'usr_totp_secret', 'usr_totp_hmac_key', 'usr_authhash', 'usr_permission', 'usr_is_disabled', 'usr_remember_tokens'] as const;

function fieldName(className: string): fc.Arbitrary<string> {
  const m = models.get(className)!;
  const declared = Object.keys(m.columns);
  return fc.oneof(
    fc.constantFrom(...declared, ...FLOORED_USER_COLUMNS, `${m.prefix}_api_key`, `${m.prefix}_secret`, `${m.prefix}_x_TOKEN`, '__proto__', 'constructor'),
    fc.string({ minLength: 1, maxLength: 20 }),
    fc.constantFrom(...declared).map((c) => c.toUpperCase()),
  );
}

const value: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer().map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.constantFrom('', 'true', 'false', '1', '0', 'null', '{}', '[1,2]', '{"a":"\\u0000"}', '2026-01-02 03:04:05', '2026-02-30 00:00:00', '9999-12-31 23:59:59', '\u0000', "'; drop table usr_users; --", 'x'.repeat(600)),
);

const fields = (className: string) => fc.dictionary(fieldName(className), value, { maxKeys: 8 });

function exportIsClean(data: Record<string, unknown>): void {
  for (const key of Object.keys(data)) expect(FLOORED_NAME.test(key), key).toBe(false);
}

describe('CRUD input property', () => {
  let t: TestApp;
  let member: { headers: Record<string, string>; userId: number };
  let staff: { headers: Record<string, string>; userId: number };
  let postId: number;

  beforeAll(async () => {
    t = await createTestApp();
    member = await t.keyHeaders({ permission: 4 });
    staff = await t.keyHeaders({ permission: 4, userPermission: 5 });
    await t.services.plugins.setActive('bookings', true);
    const p = await t.request({ method: 'POST', url: '/api/v1/Post', headers: { ...staff.headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'pst_title=t' });
    postId = p.json.data.pst_post_id;
  });
  afterAll(async () => t.close());

  const userSecrets = (id: number) =>
    t.services.db.selectFrom('usr_users').selectAll().where('usr_user_id', '=', id).executeTakeFirstOrThrow().then((r) => {
      const row = r as Record<string, unknown>;
      return Object.fromEntries(FLOORED_USER_COLUMNS.map((c) => [c, JSON.stringify(row[c])]));
    });

  it.each([
    ['Comment', 'member'],
    ['Product', 'staff'],
    ['SurveyAnswer', 'staff'],
    ['Message', 'member'],
    ['BookingResource', 'staff'],
    ['User', 'staff'],
  ] as const)('POST /%s as %s never fails with 5xx and never exports a floored column', async (className, who) => {
    const caller = who === 'staff' ? staff : member;
    let written = 0;
    await fc.assert(
      fc.asyncProperty(fields(className), async (random) => {
        let input = random;
        // Required fields first, so that many runs get as far as a write; random fields may override them.
        const base: Record<string, string> = {
          Comment: { cmt_pst_post_id: String(postId), cmt_body: 'b' },
          Product: { pro_name: 'n', pro_link: 'l' },
          Message: { msg_body: 'hello' },
          BookingResource: { bkr_name: 'room' },
          User: { usr_first_name: 'F' },
          SurveyAnswer: {},
        }[className];
        if (className === 'User') base.usr_email = `p${Math.random().toString(36).slice(2)}@example.com`;
        input = { ...base, ...input };
        const res = await t.request({ method: 'POST', url: `/api/v1/${className}`, headers: { ...caller.headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(input).toString() });
        expect(res.statusCode, res.body).toBeLessThan(500);
        if (res.statusCode === 200) {
          written++;
          exportIsClean(res.json.data);
        } else expect(['TransactionError', 'AuthenticationError']).toContain(res.json.errortype);
      }),
      { numRuns: 30 },
    );
    // The property is only interesting if some random inputs got all the way to a write.
    if (className !== 'SurveyAnswer') expect(written).toBeGreaterThan(0);
  });

  it('PUT /User/{self} with random fields never writes a floored or privilege column', async () => {
    const before = await userSecrets(member.userId);
    await fc.assert(
      fc.asyncProperty(fields('User'), async (input) => {
        const res = await t.request({ method: 'PUT', url: `/api/v1/User/${member.userId}?${new URLSearchParams(input).toString()}`, headers: member.headers });
        expect(res.statusCode, res.body).toBeLessThan(500);
        if (res.statusCode === 200) exportIsClean(res.json.data);
        expect(await userSecrets(member.userId)).toEqual(before);
      }),
      { numRuns: 60 },
    );
  });

  it('PUT /Comment/{id} by its owner never changes the owner or the moderation flag', async () => {
    const c = await t.request({ method: 'POST', url: '/api/v1/Comment', headers: { ...member.headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: `cmt_pst_post_id=${postId}&cmt_body=b` });
    const id = c.json.data.cmt_comment_id;
    await fc.assert(
      fc.asyncProperty(fields('Comment'), async (input) => {
        const res = await t.request({ method: 'PUT', url: `/api/v1/Comment/${id}?${new URLSearchParams(input).toString()}`, headers: member.headers });
        expect(res.statusCode, res.body).toBeLessThan(500);
        const row = await t.services.db.selectFrom('cmt_comments' as any).selectAll().where('cmt_comment_id', '=', id).executeTakeFirstOrThrow() as any;
        expect(Number(row.cmt_usr_user_id)).toBe(member.userId);
        expect(row.cmt_is_approved).toBe(true);
      }),
      { numRuns: 40 },
    );
  });
});
