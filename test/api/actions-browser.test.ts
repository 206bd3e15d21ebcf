import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction } from '../../src/actions/define.js';
import { actionRegistry } from '../../src/actions/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signIn, webClient } from '../helpers/browser-session.js';

let runs = 0;
const TEST_ACTIONS = [
  // The cart shape: guests allowed, website sessions only, state kept in the session.
  defineAction({
    name: 'bs_cart_add',
    description: 'Add an item to the session cart',
    mutates: true,
    auth: { allow_guest: true, requires_browser_session: true, session_write: true },
    input: { item: { type: 'string', required: true } },
    async run({ input, session }) {
      runs += 1;
      const cart = Array.isArray(session?.cart) ? (session.cart as string[]) : [];
      cart.push(input.item);
      if (session) session.cart = cart;
      return { data: { cart } };
    },
  }),
  defineAction({
    name: 'bs_cart_peek',
    description: 'Tries to change the session without session_write',
    mutates: false,
    auth: { allow_guest: true, requires_browser_session: true },
    async run({ session }) {
      const before = session?.cart ?? null;
      if (session) session.cart = ['lost'];
      return { data: { cart: before } };
    },
  }),
  defineAction({
    name: 'bs_member',
    description: 'Signed-in callers only',
    mutates: true,
    async run({ user, principal }) {
      runs += 1;
      return { data: { user_id: user?.usr_user_id ?? null, credential: principal?.credential ?? null, run: runs } };
    },
  }),
];

let t: TestApp;
beforeAll(async () => {
  for (const a of TEST_ACTIONS) actionRegistry.register(a);
  t = await createTestApp();
});
afterAll(async () => {
  for (const a of TEST_ACTIONS) actionRegistry.unregister(a.name);
  await t.close();
});

describe('actions from website sessions', () => {
  it('runs a sessioned action as the signed-in browser user without key headers', async () => {
    const { userId, email, password } = await t.createUser();
    const web = await signIn(t, email, password);
    const res = await web.api('POST', '/api/v1/action/bs_member', { payload: {} });
    expect(res.statusCode).toBe(200);
    expect(res.json.data).toMatchObject({ user_id: userId, credential: 'browser' });
  });

  it('denies the anonymous principal 401 unless the action allows guests', async () => {
    const guest = webClient(t);
    await guest.get('/login');
    const res = await guest.api('POST', '/api/v1/action/bs_member', { payload: {} });
    expect(res.statusCode).toBe(401);
    expect(res.json.errortype).toBe('AuthenticationError');
  });

  it('lets a guest use an allow_guest action and persists the session under session_write', async () => {
    const guest = webClient(t);
    await guest.get('/login');
    const first = await guest.api('POST', '/api/v1/action/bs_cart_add', { payload: { item: 'mug' } });
    expect(first.statusCode).toBe(200);
    expect(first.json.data).toEqual({ cart: ['mug'] });
    const second = await guest.api('POST', '/api/v1/action/bs_cart_add', { payload: { item: 'tee' } });
    expect(second.json.data).toEqual({ cart: ['mug', 'tee'] });
  });

  it('does not persist session changes without session_write', async () => {
    const guest = webClient(t);
    await guest.get('/login');
    await guest.api('POST', '/api/v1/action/bs_cart_add', { payload: { item: 'mug' } });
    const peek = await guest.api('POST', '/api/v1/action/bs_cart_peek', { payload: {} });
    expect(peek.json.data).toEqual({ cart: ['mug'] });
    const again = await guest.api('POST', '/api/v1/action/bs_cart_peek', { payload: {} });
    expect(again.json.data).toEqual({ cart: ['mug'] });
  });

  it('refuses API keys on a requires_browser_session action with 403', async () => {
    const { headers } = await t.keyHeaders();
    const res = await t.request({ method: 'POST', url: '/api/v1/action/bs_cart_add', payload: { item: 'mug' }, headers });
    expect(res.statusCode).toBe(403);
    expect(res.json.errortype).toBe('AuthenticationError');
  });

  it('ignores Idempotency-Key for guests: no scope, the logic runs each time', async () => {
    const guest = webClient(t);
    await guest.get('/login');
    const before = runs;
    const headers = { 'idempotency-key': 'guest-key-1' };
    await guest.api('POST', '/api/v1/action/bs_cart_add', { payload: { item: 'a' }, headers });
    await guest.api('POST', '/api/v1/action/bs_cart_add', { payload: { item: 'a' }, headers });
    expect(runs - before).toBe(2);
    const rows = await t.services.db.selectFrom('aik_api_idempotency_keys').selectAll().execute();
    expect(rows).toEqual([]);
  });

  it('scopes a signed-in browser session key to its session and replays', async () => {
    const { email, password } = await t.createUser();
    const web = await signIn(t, email, password);
    const headers = { 'idempotency-key': 'browser-key-1' };
    const a = await web.api('POST', '/api/v1/action/bs_member', { payload: {}, headers });
    const b = await web.api('POST', '/api/v1/action/bs_member', { payload: {}, headers });
    expect(a.statusCode).toBe(200);
    expect(b.body).toBe(a.body);
    const rows = await t.services.db.selectFrom('aik_api_idempotency_keys').select('aik_scope').execute();
    expect(rows.map((r) => r.aik_scope)).toEqual([expect.stringMatching(/^browser:\d+$/)]);
  });
});
