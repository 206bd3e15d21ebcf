import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAction } from '../../src/actions/define.js';
import { actionRegistry } from '../../src/actions/index.js';
import { models } from '../../src/models/index.js';
import { managementHandlers } from '../../src/surfaces/management/registry.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// An action declared like any other, registered before the app starts: it must appear by itself.
const probe = defineAction({
  name: 'openapi_probe',
  description: 'Probe action for the OpenAPI document',
  requires_setting: 'drive_active',
  mutates: true,
  input: {
    count: { type: 'int', required: true, min: 1, max: 9 },
    kind: { type: 'string', options: ['a', 'b'] },
    tags: { type: 'array', items: { type: 'string', max_length: 5 }, max: 3 },
    when: { type: 'date' },
  },
  async run({ input }) {
    return { data: { input } };
  },
});

let t: TestApp;
let staff: Record<string, string>;
const fetchDoc = async () => {
  const res = await t.request({ method: 'GET', url: '/api/openapi.json' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return res.json as { openapi: string; paths: Record<string, Record<string, any>>; components: any };
};

beforeAll(async () => {
  actionRegistry.register(probe);
  t = await createTestApp({ settings: { drive_active: true } });
  staff = (await t.staffHeaders({ userPermission: 10 })).headers;
});
afterAll(async () => {
  actionRegistry.unregister(probe.name);
  await t?.close();
});

describe('GET /api/openapi.json', () => {
  it('is an OpenAPI 3.1 document that validates against the 3.1 schema', async () => {
    const doc = await fetchDoc();
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('lists every action GET /api/v1/actions publishes, with its descriptor', async () => {
    const doc = await fetchDoc();
    const live = await t.request({ method: 'GET', url: '/api/v1/actions' });
    const names = Object.keys(live.json.data);
    expect(names).toContain('openapi_probe');
    expect(names.length).toBeGreaterThan(20);
    for (const name of names) {
      const op = doc.paths[`/action/${name}`]?.post;
      expect(op, name).toBeDefined();
      expect(op['x-action'].requires_session).toBe(live.json.data[name].requires_session);
      expect(op['x-action'].has_form).toBe(live.json.data[name].has_form);
      if (live.json.data[name].has_form) expect(doc.paths[`/form/${name}`]?.get, `form ${name}`).toBeDefined();
    }
    // The input schema, its bounds, and the requires_setting refusal.
    const op = doc.paths['/action/openapi_probe']!.post;
    const schema = doc.components.schemas[op.requestBody.content['application/json'].schema.$ref.split('/').pop()];
    expect(schema.required).toEqual(['count']);
    expect(schema.properties.count).toMatchObject({ type: 'integer', minimum: 1, maximum: 9 });
    expect(schema.properties.kind).toMatchObject({ type: ['string', 'null'], enum: ['a', 'b'] });
    expect(schema.properties.tags).toMatchObject({ type: ['array', 'null'], maxItems: 3, items: { type: 'string', maxLength: 5 } });
    expect(op['x-action'].requires_setting).toBe('drive_active');
    expect(op.responses['403'].$ref).toBe('#/components/responses/Error403ActionErrorAuthenticationError');
    expect(op.security).toEqual([{ publicKey: [], secretKey: [] }, { sessionCookie: [], csrfHeader: [] }]);
    // Sessionless actions need no credential.
    expect(doc.paths['/action/register']!.post.security).toEqual([]);
  });

  it('lists every readable CRUD class and each exposed verb, and each class it lists answers live', async () => {
    const doc = await fetchDoc();
    const readable = models.all().filter((m) => m.exposure.readable && models.resource(m.className, t.services.plugins));
    expect(readable.length).toBeGreaterThan(20);
    for (const m of readable) {
      expect(doc.paths[`/${m.className}/{id}`]?.get, m.className).toBeDefined();
      expect(doc.paths[`/${m.className}s`]?.get, m.className).toBeDefined();
      const res = await t.request({ method: 'GET', url: `/api/v1/${m.className}s`, headers: staff });
      expect(res.statusCode, m.className).toBe(200);
      const row = doc.components.schemas[m.className];
      expect(row.properties).not.toHaveProperty(`${m.prefix}_password`);
      for (const key of Object.keys(res.json.data[0] ?? {})) expect(row.properties, `${m.className}.${key}`).toHaveProperty(key);
    }
    for (const m of models.all().filter((x) => !x.exposure.readable)) expect(doc.paths[`/${m.className}/{id}`]?.get).toBeUndefined();
    // Floors: never exported, never written.
    expect(doc.components.schemas.User.properties).not.toHaveProperty('usr_password');
    expect(doc.components.schemas.User.properties).not.toHaveProperty('usr_authhash');
    expect(doc.components.schemas.UserInput.properties).not.toHaveProperty('usr_permission');
    expect(doc.components.schemas.UserInput.properties).not.toHaveProperty('usr_user_id');
  });

  it('documents management, auth, app, webhook and upload endpoints, and every documented operation is served', async () => {
    const doc = await fetchDoc();
    for (const h of managementHandlers) expect(doc.paths[h.path ? `/management/${h.path}` : '/management']?.get, h.path).toBeDefined();
    expect(doc.paths['/management/backups/fetch']!.get.responses['200'].content).toHaveProperty('application/octet-stream');
    for (const p of ['/auth/login', '/auth/session', '/auth/logout', '/auth/web_session', '/auth/device_link', '/auth/device_link/{poll_token}', '/app/navigation', '/webhooks/{source}', '/drive_upload/{token}']) {
      expect(doc.paths[p], p).toBeDefined();
    }
    expect(Object.keys(doc.paths['/drive_upload/{token}']!).sort()).toEqual(['get', 'put']);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['csrfHeader', 'publicKey', 'secretKey', 'sessionCookie']);
    expect(doc.components.securitySchemes.csrfHeader).toEqual(expect.objectContaining({ in: 'header', name: 'X-Service-Csrf' }));
    let checked = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops)) {
        const url = `/api/v1${path.replace(/\{[^}]+\}/g, '1')}`;
        const res = await t.request({ method: method.toUpperCase() as 'GET', url });
        // An unserved path is the API's 'No API endpoint' 404; a served one answers anything else.
        expect(String(res.json?.error ?? ''), `${method} ${path}`).not.toMatch(/^No API endpoint/);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('documents every fixed route the server registers under /api/v1 (the registries cover the rest)', async () => {
    // Plugin channels are registered always and documented while their plugin is active: switch all on.
    const plugins = t.services.plugins.list().map((p) => p.name);
    for (const name of plugins) await t.services.plugins.setActive(name, true);
    let doc: Awaited<ReturnType<typeof fetchDoc>>;
    try {
      doc = await fetchDoc();
    } finally {
      for (const name of plugins) await t.services.plugins.setActive(name, false);
    }
    const documented = new Set(Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p.replace(/\{[^}]+\}/g, '{}')}`)));
    const fixed = registeredRoutes(t.app.printRoutes({ commonPrefix: false }))
      .filter(({ path }) => path.startsWith('/api/v1/'))
      .map(({ path, methods }) => ({ path: path.slice('/api/v1'.length).replace(/:[A-Za-z_]+/g, '{}'), methods }))
      // Registry-driven families: actions, forms, management, and one route set per declared model class.
      .filter(({ path }) => !/^\/(actions?|form|management)(\/|\*|$)/.test(path) && !/^\/[A-Z]/.test(path));
    expect(fixed.length).toBeGreaterThan(8);
    for (const { path, methods } of fixed) for (const m of methods.filter((x) => x !== 'HEAD')) expect(documented, `${m} ${path}`).toContain(`${m} ${path}`);
  });

  it('shows plugin actions and models only while their plugin is active', async () => {
    const before = await fetchDoc();
    expect(before.paths['/action/mailbox/ping']).toBeUndefined();
    expect(before.paths['/relay/bundle']).toBeUndefined();
    expect(before.paths['/relay/born']).toBeUndefined();
    const pluginModels = models.all().filter((m) => m.plugin === 'bookings' && m.exposure.readable);
    expect(pluginModels.length).toBeGreaterThan(0);
    for (const m of pluginModels) expect(before.paths[`/${m.className}s`]).toBeUndefined();
    await t.services.plugins.setActive('mailbox', true);
    await t.services.plugins.setActive('bookings', true);
    try {
      const after = await fetchDoc();
      expect(after.paths['/action/mailbox/ping']?.post).toBeDefined();
      expect(after.paths['/relay/bundle']?.get?.responses['200'].content).toHaveProperty('application/gzip');
      expect(after.paths['/relay/born']?.post?.security).toEqual([]);
      expect(after.paths['/action/booking']?.post).toBeDefined();
      for (const m of pluginModels) expect(after.paths[`/${m.className}s`]?.get).toBeDefined();
      expect((await new Validator().validate(after as never)).valid).toBe(true);
    } finally {
      await t.services.plugins.setActive('mailbox', false);
      await t.services.plugins.setActive('bookings', false);
    }
    expect((await fetchDoc()).paths['/action/mailbox/ping']).toBeUndefined();
  });
});

/** Every route in Fastify's printed tree: the full path (ancestors' segments joined) and its methods. */
function registeredRoutes(tree: string): Array<{ path: string; methods: string[] }> {
  const stack: string[] = [];
  const out: Array<{ path: string; methods: string[] }> = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)[└├]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    const path = stack.join('').replace(/^\/+/, '/');
    if (m[3]) out.push({ path, methods: m[3].split(', ') });
  }
  return out;
}
