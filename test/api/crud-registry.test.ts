import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ColumnSpec, Model } from '../../src/models/define.js';
import { models } from '../../src/models/index.js';
import { FLOORED_NAME } from '../../src/surfaces/crud/fields.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// Walks every model in the registry: exposure per verb, floors on every export, class-name resolution.
const READABLE = ['User', 'Product', 'Event', 'EventRegistrant', 'EventSession', 'Order', 'OrderItem', 'Group', 'GroupMember', 'Post', 'Page', 'Email', 'Message', 'File', 'CouponCode', 'SubscriptionTier', 'Location', 'Video', 'Comment', 'Survey', 'SurveyAnswer', 'Question', 'QuestionOption', 'MailingList', 'MailingListRegistrant', 'Passkey'];
const NOT_WRITABLE = ['Order', 'OrderItem', 'EventRegistrant', 'Passkey'];
// DESIGN 7: world-readable catalogue and content; staff-only models carry no owner column.
const PUBLIC_READ = ['Post', 'Page', 'Event', 'EventSession', 'Product', 'Video', 'Location', 'SubscriptionTier', 'Survey', 'Question', 'QuestionOption', 'MailingList', 'Comment'];
const STAFF_ONLY = ['Group', 'GroupMember', 'Email', 'CouponCode'];
/**
 * The core's models. A plugin's models join the registry when some file in the worker first loads the
 * plugins, so which of them are present here would depend on file order; each plugin's tests check its own.
 */
const coreModels = (): Model[] => models.all().filter((m) => !m.plugin);
const NEVER_EXPOSED = ['ApiKey', 'Setting', 'RequestLog', 'ChangeTracking', 'WebhookLog', 'Address', 'PhoneNumber', 'WaitingList', 'IdempotencyRecord'];

/** A value the column accepts, as a form field. */
function sample(spec: ColumnSpec, i: number): string {
  switch (spec.type) {
    case 'bool':
      return 'true';
    case 'int':
    case 'smallint':
    case 'bigint':
      return String(Math.max(spec.min ?? 1, 5));
    case 'timestamp':
      return '2026-01-02 03:04:05';
    case 'date':
      return '2026-01-02';
    case 'jsonb':
      return '{"a":1}';
    case 'numeric':
      return '1.5';
    default:
      return spec.options?.[0] ?? `v${i}`.slice(0, spec.max ?? 10);
  }
}

describe('every model in the registry', () => {
  let t: TestApp;
  let staff: Record<string, string>;
  beforeAll(async () => {
    t = await createTestApp();
    staff = (await t.keyHeaders({ permission: 4, userPermission: 10 })).headers;
    await t.services.plugins.setActive('bookings', true);
  });
  afterAll(async () => t.close());

  const exposed = (m: Model) => ({ read: m.exposure.readable, write: m.exposure.writable });

  it('matches DESIGN\'s exposure table', () => {
    for (const name of READABLE) expect(models.get(name)?.exposure.readable, name).toBe(true);
    for (const name of READABLE) expect(models.get(name)?.exposure.writable, name).toBe(!NOT_WRITABLE.includes(name));
    for (const m of coreModels()) if (!READABLE.includes(m.className)) expect(exposed(m), m.className).toEqual({ read: false, write: false });
    for (const m of coreModels()) expect(Boolean(m.exposure.publicRead), m.className).toBe(PUBLIC_READ.includes(m.className));
    for (const name of STAFF_ONLY) expect(models.get(name)?.owner, name).toBeNull();
    expect(coreModels().filter((m) => m.ownerOnly).map((m) => m.className)).toEqual(['Passkey']);
    expect(models.get('User')?.exposure.unwritable).toEqual(expect.arrayContaining(['usr_permission', 'usr_email_is_verified', 'usr_is_disabled', 'usr_force_password_change']));
    expect(models.get('User')?.exposure.unreadable).toContain('usr_authhash');
  });

  it.each(coreModels().map((m) => [m.className] as const))('%s: wrongly cased names are 404 NotFound on every verb', async (name) => {
    const variants = [name.toLowerCase(), name.toUpperCase(), name[0]!.toLowerCase() + name.slice(1)];
    for (const v of variants) {
      for (const [method, url] of [['GET', `/${v}/1`], ['GET', `/${v}s`], ['POST', `/${v}`], ['PUT', `/${v}/1`], ['DELETE', `/${v}/1`]] as const) {
        const res = await t.request({ method, url: `/api/v1${url}`, headers: staff, ...(method === 'POST' ? { payload: {} } : {}) });
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect(res.json.errortype, `${method} ${url}`).toBe('NotFound');
      }
    }
  });

  it.each(coreModels().filter((m) => m.exposure.writable).map((m) => [m.className, m] as const))('%s: a staff POST with every column filled exports no floored column', async (_name, m) => {
    const fields: Record<string, string> = {};
    let i = 0;
    for (const [name, spec] of Object.entries(m.columns)) {
      if (name.endsWith('_id') && name !== m.primaryKey) continue; // references need real rows
      fields[name] = sample(spec, i++);
    }
    const res = await t.request({ method: 'POST', url: `/api/v1/${m.className}`, headers: { ...staff, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString() });
    expect(res.statusCode, res.body).toBeLessThan(500);
    if (res.statusCode === 200) {
      expect(res.json.success_message).toBe(`New ${m.className} successful.`);
      for (const key of Object.keys(res.json.data)) expect(FLOORED_NAME.test(key) || (m.exposure.unreadable ?? []).includes(key), key).toBe(false);
      const id = res.json.data[m.primaryKey];
      const got = await t.request({ method: 'GET', url: `/api/v1/${m.className}/${id}`, headers: staff });
      expect(got.json.success_message).toBe(`${m.className} found.`);
      expect(got.json.data).toEqual(res.json.data);
    }
  });

  it.each(coreModels().map((m) => [m.className, m] as const))('%s: unexposed verbs 404, exports carry no floored column', async (_name, m) => {
    const single = `/api/v1/${m.className}/1`;
    if (!m.exposure.readable) {
      expect((await t.request({ method: 'GET', url: single, headers: staff })).statusCode).toBe(404);
      expect((await t.request({ method: 'GET', url: `/api/v1/${m.className}s`, headers: staff })).statusCode).toBe(404);
    }
    if (!m.exposure.writable) {
      expect((await t.request({ method: 'POST', url: `/api/v1/${m.className}`, headers: staff, payload: {} })).statusCode).toBe(404);
      expect((await t.request({ method: 'PUT', url: single, headers: staff })).statusCode).toBe(404);
      expect((await t.request({ method: 'DELETE', url: single, headers: staff })).statusCode).toBe(404);
    }
    // The rows the POST test above created (and any other) come back through the export allowlist.
    if (m.exposure.readable) {
      const list = await t.request({ method: 'GET', url: `/api/v1/${m.className}s?numperpage=100`, headers: staff });
      expect(list.statusCode).toBe(200);
      for (const row of list.json.data) {
        for (const key of Object.keys(row)) {
          expect(FLOORED_NAME.test(key), `${m.className}.${key}`).toBe(false);
          expect(m.exposure.unreadable ?? []).not.toContain(key);
          expect(key in m.columns || (m.exposure.derived ?? []).includes(key), key).toBe(true);
        }
      }
    }
  });

  it.each(['post', 'POST', 'posts', 'Posts', 'Nope', 'NOPE', 'user', 'USER', 'Users', 'Passkeyss', 'Post.', 'Pos'])('answers GET /%s/1 for an unknown or wrongly cased class with 404 NotFound', async (name) => {
    const res = await t.request({ method: 'GET', url: `/api/v1/${name}/1`, headers: staff });
    expect(res.statusCode).toBe(404);
    expect(res.json.errortype).toBe('NotFound');
  });

  it.each(['posts', 'POSTS', 'Post', 'Postss', 'user', 'Nopes', 'Addresss'])('answers the collection GET /%s with 404 when it names no readable class', async (name) => {
    const res = await t.request({ method: 'GET', url: `/api/v1/${name}`, headers: staff });
    expect(res.statusCode).toBe(404);
    expect(res.json.errortype).toBe('NotFound');
  });

  it('resolves the class before authenticating: an unknown class is 404 without credentials, a known one asks for them', async () => {
    const unknown = await t.request({ method: 'GET', url: '/api/v1/Nopes' });
    expect(unknown.statusCode).toBe(404);
    const known = await t.request({ method: 'GET', url: '/api/v1/Posts' });
    expect(known.statusCode).toBe(400);
    expect(known.json.errortype).toBe('AuthenticationError');
  });

  it.each(NEVER_EXPOSED)('answers every verb on %s with 404', async (name) => {
    for (const [method, url] of [['GET', `/${name}/1`], ['GET', `/${name}s`], ['POST', `/${name}`], ['PUT', `/${name}/1`], ['DELETE', `/${name}/1`]] as const) {
      const res = await t.request({ method, url: `/api/v1${url}`, headers: staff, ...(method === 'POST' ? { payload: {} } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
  });
});
