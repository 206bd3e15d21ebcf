import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction } from '../../src/actions/define.js';
import { field } from '../../src/actions/form.js';
import { actionRegistry } from '../../src/actions/index.js';
import { businessError } from '../../src/http/errors.js';
import { formBody, multipartBody } from '../helpers/actions.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const TEST_ACTIONS = [
  defineAction({
    name: 'test_echo',
    description: 'Echo the coerced input',
    mutates: false,
    input: { n: { type: 'int', required: true }, flag: { type: 'bool' }, tags: { type: 'array', items: { type: 'string' } } },
    async run({ input, user }) {
      return { data: { input, user_id: user?.usr_user_id ?? null }, message: 'echoed', redirect: '/echo' };
    },
  }),
  defineAction({
    name: 'test_drive',
    description: 'Only while drive_active',
    requires_setting: 'drive_active',
    mutates: false,
    async run() {
      return { data: { ok: true } };
    },
  }),
  defineAction({
    name: 'test_business',
    description: 'Always refuses',
    mutates: true,
    async run() {
      throw businessError('Feature disabled', { reason: 'disabled' });
    },
  }),
  defineAction({
    name: 'test_files',
    description: 'Accepts attachments',
    mutates: false,
    accepts_files: true,
    input: { note: { type: 'string', required: true } },
    async run({ input, attachments }) {
      return { data: { note: input.note, files: attachments.map((a) => ({ filename: a.filename, mimetype: a.mimetype, size: a.data.length, text: a.data.toString() })) } };
    },
  }),
  defineAction({
    name: 'test_open',
    description: 'Sessionless probe',
    requires_session: false,
    mutates: false,
    async run({ user, principal }) {
      return { data: { user: user?.usr_user_id ?? null, credential: principal?.credential ?? null } };
    },
  }),
  defineAction({
    name: 'test_bad_form',
    description: 'Its form builder returns a Date',
    requires_session: false,
    mutates: false,
    async run() {
      return { data: {} };
    },
    form: () => ({ submit_label: 'Go', fields: [field.text('when', 'When', { value: new Date() })] }),
  }),
  defineAction({
    name: 'test_staff',
    description: 'Staff only, machine key only',
    mutates: false,
    auth: { requires_machine_key: true, min_user_permission: 5, capability: null },
    async run() {
      return { data: { ok: true } };
    },
  }),
];

let t: TestApp;
beforeAll(async () => {
  for (const a of TEST_ACTIONS) actionRegistry.register(a);
  actionRegistry.registerUndescribed('legacy_logic');
  t = await createTestApp();
});
afterAll(async () => {
  for (const a of TEST_ACTIONS) actionRegistry.unregister(a.name);
  actionRegistry.unregister('legacy_logic');
  await t.close();
});

const post = (name: string, payload: unknown, headers: Record<string, string> = {}) =>
  t.request({ method: 'POST', url: `/api/v1/action/${name}`, payload: payload as Record<string, unknown>, headers });

describe('GET /actions (discovery)', () => {
  it('lists core actions keyed by name with description, requires_session, input and has_form', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/actions' });
    expect(res.statusCode).toBe(200);
    expect(res.json.api_version).toBe('1.0');
    const data = res.json.data;
    for (const name of ['register', 'password_reset_1', 'password_reset_2', 'password_set', 'password_edit', 'change_password_required', 'contact_preferences', 'account_edit', 'address_edit', 'phone_numbers_edit']) {
      expect(Object.keys(data[name]).sort(), name).toEqual(['description', 'has_form', 'input', 'requires_session']);
    }
    expect(data.register).toMatchObject({ description: 'Register a user account', requires_session: false, has_form: true });
    expect(data.register.input.usr_email).toEqual({ type: 'email', required: true, max_length: 64 });
    expect(data.password_reset_1).toMatchObject({ requires_session: false, has_form: true });
    expect(data.password_reset_2).toMatchObject({ requires_session: false, has_form: true });
    expect(data.password_set).toMatchObject({ requires_session: false, has_form: false });
    expect(data.password_edit).toMatchObject({ requires_session: true, has_form: false });
    expect(data.account_edit).toMatchObject({ requires_session: true, has_form: true });
    expect(data.address_edit).toMatchObject({ requires_session: true, has_form: true });
    expect(data.phone_numbers_edit).toMatchObject({ requires_session: true, has_form: false });
    expect(data.test_echo.input).toEqual({ n: { type: 'int', required: true }, flag: { type: 'bool' }, tags: { type: 'array', items: { type: 'string' } } });
    expect(data.test_drive).toBeUndefined();
    expect(data.legacy_logic).toBeUndefined();
  });

  it('gives input null for an action without a schema', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/actions' });
    expect(res.json.data.test_business.input).toBeNull();
  });

  it('lists plugin actions as {plugin}/{action} only while the plugin is active', async () => {
    const before = await t.request({ method: 'GET', url: '/api/v1/actions' });
    expect(before.json.data['mailbox/ping']).toBeUndefined();
    await t.services.plugins.setActive('mailbox', true);
    try {
      const after = await t.request({ method: 'GET', url: '/api/v1/actions' });
      expect(after.json.data['mailbox/ping']).toEqual({ description: 'Check that the mailbox plugin answers actions', requires_session: true, input: null, has_form: false });
    } finally {
      await t.services.plugins.setActive('mailbox', false);
    }
  });

  it('omits an action whose requires_setting is falsy, and lists it once the setting is on', async () => {
    await t.services.settings.set('drive_active', true);
    try {
      const res = await t.request({ method: 'GET', url: '/api/v1/actions' });
      expect(res.json.data.test_drive).toEqual({ description: 'Only while drive_active', requires_session: true, input: null, has_form: false });
    } finally {
      await t.services.settings.set('drive_active', false);
    }
  });
});

describe('POST /action/{name}: the action error table', () => {
  it('404 ActionError for an unknown action', async () => {
    const { headers } = await t.keyHeaders();
    const res = await post('no_such_action', {}, headers);
    expect(res.statusCode).toBe(404);
    expect(res.json).toEqual({ api_version: '1.0', errortype: 'ActionError', error: "Unknown action 'no_such_action'", data: { action: 'no_such_action' } });
  });

  it('404 ActionError naming the missing descriptor when the logic exists without one', async () => {
    const res = await post('legacy_logic', {});
    expect(res.statusCode).toBe(404);
    expect(res.json.errortype).toBe('ActionError');
    expect(res.json.error).toBe("Action 'legacy_logic' is not published: it has no API descriptor");
    expect(res.json.data).toEqual({ action: 'legacy_logic', missing: 'descriptor' });
  });

  it('404 for a plugin action while its plugin is inactive, the same as an unknown action', async () => {
    const { headers } = await t.keyHeaders();
    const inactive = await post('mailbox/ping', {}, headers);
    const unknownPlugin = await post('nosuch/ping', {}, headers);
    expect(inactive.statusCode).toBe(404);
    expect(unknownPlugin.statusCode).toBe(404);
    expect(inactive.json.errortype).toBe('ActionError');
    expect(unknownPlugin.json.errortype).toBe('ActionError');
    expect(inactive.json.error).toBe("Unknown action 'mailbox/ping'");
  });

  it('runs a plugin action while its plugin is active', async () => {
    const { headers } = await t.keyHeaders({ permission: 1 });
    await t.services.plugins.setActive('mailbox', true);
    try {
      const res = await post('mailbox/ping', {}, headers);
      expect(res.statusCode).toBe(200);
      expect(res.json).toEqual({ api_version: '1.0', success_message: '', data: { plugin: 'mailbox', time: '2026-03-01 12:00:00' } });
    } finally {
      await t.services.plugins.setActive('mailbox', false);
    }
  });

  it('405 ActionError for any method but POST', async () => {
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
      const res = await t.request({ method, url: '/api/v1/action/register' });
      expect(res.statusCode, method).toBe(405);
      expect(res.json.errortype, method).toBe('ActionError');
    }
    const plugin = await t.request({ method: 'GET', url: '/api/v1/action/mailbox/ping' });
    expect(plugin.statusCode).toBe(405);
    const discovery = await t.request({ method: 'POST', url: '/api/v1/actions' });
    expect(discovery.statusCode).toBe(405);
    expect(discovery.json.errortype).toBe('ActionError');
  });

  it('403 ActionError naming the setting while requires_setting is falsy, answered before authentication', async () => {
    const none = await post('test_drive', {});
    expect(none.statusCode).toBe(403);
    expect(none.json).toEqual({
      api_version: '1.0',
      errortype: 'ActionError',
      error: "Action 'test_drive' is not available: setting drive_active is off",
      data: { setting: 'drive_active' },
    });
    const badKey = await post('test_drive', {}, { public_key: 'key_nope', secret_key: 'nope' });
    expect(badKey.statusCode).toBe(403);
    expect(badKey.json.errortype).toBe('ActionError');
  });

  it('authenticates an action once its setting is on', async () => {
    await t.services.settings.set('drive_active', true);
    try {
      const anonymous = await post('test_drive', {});
      expect(anonymous.statusCode).toBe(400);
      expect(anonymous.json.errortype).toBe('AuthenticationError');
      const { headers } = await t.keyHeaders();
      const ok = await post('test_drive', {}, headers);
      expect(ok.statusCode).toBe(200);
      expect(ok.json.data).toEqual({ ok: true });
    } finally {
      await t.services.settings.set('drive_active', false);
    }
  });

  it('422 ActionError for a business-logic refusal', async () => {
    const { headers } = await t.keyHeaders();
    const res = await post('test_business', {}, headers);
    expect(res.statusCode).toBe(422);
    expect(res.json).toEqual({ api_version: '1.0', errortype: 'ActionError', error: 'Feature disabled', data: { reason: 'disabled' } });
  });

  it('422 ValidationError mapping every failing field', async () => {
    const { headers } = await t.keyHeaders();
    const res = await post('test_echo', { flag: 'maybe', tags: 'x' }, headers);
    expect(res.statusCode).toBe(422);
    expect(res.json).toEqual({
      api_version: '1.0',
      errortype: 'ValidationError',
      error: 'Input validation failed',
      data: {},
      validation_errors: { n: 'is required', flag: 'must be true or false' },
    });
  });

  it('a sessioned action needs key headers', async () => {
    const res = await post('test_echo', { n: 1 });
    expect(res.statusCode).toBe(400);
    expect(res.json.errortype).toBe('AuthenticationError');
  });

  it('enforces the surface default capability write: a read-only key gets 403', async () => {
    const { headers } = await t.keyHeaders({ permission: 1 });
    const res = await post('test_echo', { n: 1 }, headers);
    expect(res.statusCode).toBe(403);
    expect(res.json.errortype).toBe('AuthenticationError');
  });

  it('enforces an explicit auth block: machine key, usr_permission floor, no capability check', async () => {
    const member = await t.keyHeaders({ permission: 1, userPermission: 0 });
    expect((await post('test_staff', {}, member.headers)).statusCode).toBe(403);
    const staff = await t.keyHeaders({ permission: 1, userPermission: 5 });
    expect((await post('test_staff', {}, staff.headers)).statusCode).toBe(200);
    const session = await t.createUser({ permission: 10 });
    const login = await t.login(session.email, session.password);
    const bySessionKey = await post('test_staff', {}, login.headers);
    expect(bySessionKey.statusCode).toBe(403);
    expect(bySessionKey.json.errortype).toBe('AuthenticationError');
  });
});

describe('POST /action/{name}: bodies and success envelope', () => {
  it('returns the success envelope with data, message and redirect, running as the key user', async () => {
    const { headers, userId } = await t.keyHeaders({ permission: 2 });
    const res = await post('test_echo', { n: '5', flag: 'true', tags: ['a'], extra: 'kept' }, headers);
    expect(res.statusCode).toBe(200);
    expect(res.json).toEqual({
      api_version: '1.0',
      success_message: 'echoed',
      data: { input: { n: 5, flag: true, tags: ['a'], extra: 'kept' }, user_id: userId },
      redirect: '/echo',
    });
  });

  it('accepts a form body, coercing its strings and reading tags[] as a list', async () => {
    const { headers } = await t.keyHeaders();
    const body = formBody([['n', '7'], ['flag', '0'], ['tags[]', 'a'], ['tags[]', 'b']]);
    const res = await t.request({ method: 'POST', url: '/api/v1/action/test_echo', payload: body.payload, headers: { ...headers, ...body.headers } });
    expect(res.statusCode).toBe(200);
    expect(res.json.data.input).toEqual({ n: 7, flag: false, tags: ['a', 'b'] });
  });

  it('accepts multipart/form-data with attachments[] for an action that accepts files', async () => {
    const { headers } = await t.keyHeaders();
    const body = multipartBody({ note: 'two files' }, [
      { filename: 'a.txt', type: 'text/plain', content: 'hello' },
      { filename: 'b.csv', type: 'text/csv', content: 'x,y\n1,2' },
    ]);
    const res = await t.request({ method: 'POST', url: '/api/v1/action/test_files', payload: body.payload, headers: { ...headers, ...body.headers } });
    expect(res.statusCode).toBe(200);
    expect(res.json.data).toEqual({
      note: 'two files',
      files: [
        { filename: 'a.txt', mimetype: 'text/plain', size: 5, text: 'hello' },
        { filename: 'b.csv', mimetype: 'text/csv', size: 7, text: 'x,y\n1,2' },
      ],
    });
  });

  it('validates multipart fields like any other body', async () => {
    const { headers } = await t.keyHeaders();
    const body = multipartBody({}, [{ filename: 'a.txt', type: 'text/plain', content: 'hello' }]);
    const res = await t.request({ method: 'POST', url: '/api/v1/action/test_files', payload: body.payload, headers: { ...headers, ...body.headers } });
    expect(res.statusCode).toBe(422);
    expect(res.json.validation_errors).toEqual({ note: 'is required' });
  });

  it('refuses multipart for an action that does not accept files', async () => {
    const { headers } = await t.keyHeaders();
    const body = multipartBody({ n: '1' }, [{ filename: 'a.txt', type: 'text/plain', content: 'hello' }]);
    const res = await t.request({ method: 'POST', url: '/api/v1/action/test_echo', payload: body.payload, headers: { ...headers, ...body.headers } });
    expect(res.statusCode).toBe(422);
    expect(res.json.errortype).toBe('ValidationError');
    expect(res.json.validation_errors).toEqual({ attachments: 'this action does not accept files' });
  });

  it('refuses a JSON body that is not an object', async () => {
    const { headers } = await t.keyHeaders();
    const res = await t.request({ method: 'POST', url: '/api/v1/action/test_echo', payload: '[1,2]', headers: { ...headers, 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(422);
    expect(res.json.validation_errors).toEqual({ body: 'must be an object of the action fields' });
  });
});

describe('sessionless actions', () => {
  it('are dispatched without key headers and run with no user', async () => {
    const res = await post('test_open', {});
    expect(res.statusCode).toBe(200);
    expect(res.json.data).toEqual({ user: null, credential: null });
  });

  it('still require HTTPS', async () => {
    await t.services.settings.set('api_require_https', true);
    try {
      const res = await post('test_open', {});
      expect(res.statusCode).toBe(426);
      expect(res.json.errortype).toBe('SecurityError');
    } finally {
      await t.services.settings.set('api_require_https', false);
    }
  });
});

describe('sessionless actions and rate limits', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await createTestApp({ settings: { api_rate_limit_requests: 2, api_auth_rate_limit_requests: 1 } });
  });
  afterAll(async () => limited.close());

  it('count toward the general per-IP limit', async () => {
    const send = () => limited.request({ method: 'POST', url: '/api/v1/action/test_open', payload: {}, remoteAddress: '10.1.1.1' });
    expect((await send()).statusCode).toBe(200);
    expect((await send()).statusCode).toBe(200);
    const third = await send();
    expect(third.statusCode).toBe(429);
    expect(third.json.errortype).toBe('RateLimitError');
  });

  it('a wrong reset code counts toward the failed-auth limit', async () => {
    const send = () =>
      limited.request({ method: 'POST', url: '/api/v1/action/password_reset_2', payload: { act_code: 'wrong', password: 'new-password-1', password_confirm: 'new-password-1' }, remoteAddress: '10.2.2.2' });
    const first = await send();
    expect(first.statusCode).toBe(422);
    expect(first.json.errortype).toBe('ActionError');
    const second = await send();
    expect(second.statusCode).toBe(429);
    expect(second.json.errortype).toBe('RateLimitError');
  });
});

describe('GET /form/{name}', () => {
  it('serves sessionless forms without key headers: register, with visibility_rules on the checkbox', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/form/register' });
    expect(res.statusCode).toBe(200);
    expect(res.json).toEqual({
      api_version: '1.0',
      success_message: '',
      data: {
        schema_version: 1,
        form: { name: 'register', submit_to: '/api/v1/action/register', submit_label: 'Create account' },
        fields: [
          { type: 'text', name: 'usr_first_name', label: 'First name', value: null, required: true, maxlength: 32 },
          { type: 'text', name: 'usr_last_name', label: 'Last name', value: null, maxlength: 32 },
          { type: 'email', name: 'usr_email', label: 'Email address', value: null, required: true, maxlength: 64 },
          { type: 'password', name: 'password', label: 'Password', value: '', required: true, maxlength: 255, min: 8 },
          { type: 'password', name: 'password_confirm', label: 'Confirm password', value: '', maxlength: 255 },
          {
            type: 'checkbox',
            name: 'newsletter',
            label: 'Keep me informed',
            value: false,
            visibility_rules: { checked: { show: ['contact_preferences'] }, unchecked: { hide: ['contact_preferences'] } },
          },
          {
            type: 'checkbox_list',
            name: 'contact_preferences',
            label: 'How may we contact you?',
            value: ['email'],
            options: [
              { value: 'email', label: 'Email' },
              { value: 'sms', label: 'Text message' },
              { value: 'phone', label: 'Phone call' },
              { value: 'post', label: 'Post' },
            ],
          },
        ],
      },
    });
  });

  it('prefills password_reset_2 with the act_code query parameter', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/form/password_reset_2?act_code=abc123' });
    expect(res.statusCode).toBe(200);
    expect(res.json.data.form).toEqual({ name: 'password_reset_2', submit_to: '/api/v1/action/password_reset_2', submit_label: 'Set new password' });
    expect(res.json.data.fields[0]).toEqual({ type: 'hidden', name: 'act_code', label: '', value: 'abc123' });
    expect(res.json.data.fields.map((f: { name: string }) => f.name)).toEqual(['act_code', 'password', 'password_confirm']);
  });

  it('serves password_reset_1 without keys', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/form/password_reset_1' });
    expect(res.statusCode).toBe(200);
    expect(res.json.data.fields).toEqual([{ type: 'email', name: 'email', label: 'Email address', value: null, required: true, maxlength: 64 }]);
  });

  it('prefills account_edit with the acting user, gender drop keyed by option value', async () => {
    const { userId, email } = await t.createUser({ firstName: 'Grace', lastName: 'Hopper' });
    await t.services.db
      .updateTable('usr_users')
      .set({ usr_nickname: 'Amazing Grace', usr_bio: 'COBOL', usr_date_of_birth: '1906-12-09', usr_gender: 'Rear admiral', usr_timezone: 'America/New_York' })
      .where('usr_user_id', '=', userId)
      .execute();
    const key = await t.createMachineKey({ userId, permission: 1 });
    const res = await t.request({ method: 'GET', url: '/api/v1/form/account_edit', headers: { public_key: key.publicKey, secret_key: key.secretKey } });
    expect(res.statusCode).toBe(200);
    const { data } = res.json;
    expect(data.schema_version).toBe(1);
    expect(data.form).toEqual({ name: 'account_edit', submit_to: '/api/v1/action/account_edit', submit_label: 'Save profile' });
    const byName = Object.fromEntries(data.fields.map((f: { name: string }) => [f.name, f]));
    expect(data.fields.map((f: { name: string }) => f.name)).toEqual(['usr_first_name', 'usr_last_name', 'usr_nickname', 'usr_email', 'usr_timezone', 'usr_date_of_birth', 'usr_gender', 'gender_self_describe', 'usr_bio']);
    expect(byName.usr_first_name).toEqual({ type: 'text', name: 'usr_first_name', label: 'First name', value: 'Grace', required: true, maxlength: 32 });
    expect(byName.usr_last_name.value).toBe('Hopper');
    expect(byName.usr_nickname.value).toBe('Amazing Grace');
    expect(byName.usr_email.value).toBe(email);
    expect(byName.usr_timezone.value).toBe('America/New_York');
    expect(byName.usr_date_of_birth).toEqual({ type: 'date', name: 'usr_date_of_birth', label: 'Date of birth', value: '1906-12-09' });
    expect(byName.usr_bio).toEqual({ type: 'textarea', name: 'usr_bio', label: 'About you', value: 'COBOL', maxlength: 500 });
    expect(byName.usr_gender.value).toBe('self_describe');
    expect(byName.gender_self_describe.value).toBe('Rear admiral');
    expect(byName.usr_gender.options.map((o: { value: string }) => o.value)).toEqual(['female', 'male', 'non_binary', 'prefer_not_to_say', 'self_describe']);
    expect(byName.usr_gender.visibility_rules).toEqual({
      female: { hide: ['gender_self_describe'] },
      male: { hide: ['gender_self_describe'] },
      non_binary: { hide: ['gender_self_describe'] },
      prefer_not_to_say: { hide: ['gender_self_describe'] },
      self_describe: { show: ['gender_self_describe'] },
    });
  });

  it('a sessioned form needs key headers', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/form/account_edit' });
    expect(res.statusCode).toBe(400);
    expect(res.json.errortype).toBe('AuthenticationError');
  });

  it('a write-only key (permission 2) gets 403 on a sessioned form', async () => {
    const { headers } = await t.keyHeaders({ permission: 2 });
    const res = await t.request({ method: 'GET', url: '/api/v1/form/account_edit', headers });
    expect(res.statusCode).toBe(403);
    expect(res.json.errortype).toBe('AuthenticationError');
  });

  it('404 for an unknown action and for an action without a form builder', async () => {
    const unknown = await t.request({ method: 'GET', url: '/api/v1/form/nope' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json.errortype).toBe('ActionError');
    const formless = await t.request({ method: 'GET', url: '/api/v1/form/password_edit' });
    expect(formless.statusCode).toBe(404);
    expect(formless.json).toEqual({ api_version: '1.0', errortype: 'ActionError', error: "Action 'password_edit' has no form", data: { action: 'password_edit' } });
    const inactivePlugin = await t.request({ method: 'GET', url: '/api/v1/form/mailbox/ping' });
    expect(inactivePlugin.statusCode).toBe(404);
    expect(inactivePlugin.json).toEqual({ api_version: '1.0', errortype: 'ActionError', error: "Unknown action 'mailbox/ping'", data: { action: 'mailbox/ping' } });
  });

  it('405 ActionError for any method but GET', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const res = await t.request({ method, url: '/api/v1/form/register' });
      expect(res.statusCode, method).toBe(405);
      expect(res.json.errortype, method).toBe('ActionError');
    }
  });

  it('500 ActionError when the builder uses a non-serializable construct', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v1/form/test_bad_form' });
    expect(res.statusCode).toBe(500);
    expect(res.json).toEqual({ api_version: '1.0', errortype: 'ActionError', error: "Form for 'test_bad_form' could not be serialized (form.fields[0].value)", data: {} });
  });
});

describe('form builders see no secrets', () => {
  it('hands the builder the acting user without password hashes, tokens or second-factor secrets', async () => {
    let seen: Record<string, unknown> | null = null;
    actionRegistry.register(
      defineAction({
        name: 'test_spy_form',
        description: 'Records what its form builder receives',
        mutates: false,
        async run() {
          return { data: {} };
        },
        form: ({ user }) => {
          seen = user;
          return { submit_label: 'Go', fields: [] };
        },
      }),
    );
    try {
      const { headers, userId } = await t.keyHeaders();
      const res = await t.request({ method: 'GET', url: '/api/v1/form/test_spy_form', headers });
      expect(res.statusCode).toBe(200);
      expect(seen).toMatchObject({ usr_user_id: userId });
      const keys = Object.keys(seen!);
      for (const secret of ['usr_password', 'usr_authhash', 'usr_totp_secret', 'usr_remember_tokens', 'usr_totp_hmac_key']) expect(keys).not.toContain(secret);
    } finally {
      actionRegistry.unregister('test_spy_form');
    }
  });
});
