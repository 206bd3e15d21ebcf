import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

describe('plugin models as CRUD resources', () => {
  // Apps are built in hooks (hookTimeout), not in tests: a cold start on a busy machine outlasts testTimeout.
  let activeFromStart: TestApp;
  let withoutFolder: TestApp;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'gh-plugins-'));
    activeFromStart = await createTestApp({ activePlugins: ['bookings'] });
    withoutFolder = await createTestApp({ pluginsDir: dir });
  });
  afterAll(async () => {
    await activeFromStart?.close();
    await withoutFolder?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the bookings models when the plugin is active from the start', async () => {
    const t = activeFromStart;
    const staff = await t.staffHeaders();
    const res = await t.request({ method: 'GET', url: '/api/v1/BookingResources', headers: staff.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ num_results: 0, page: 0, numperpage: 3, data: [] });
  });

  it('answers 404 for a plugin model whose plugin folder is absent, even with its flag set in the database', async () => {
    const t = withoutFolder;
    await t.services.db.insertInto('plg_plugins').values({ plg_name: 'bookings', plg_is_active: true, plg_update_time: t.clock.now() }).execute();
    await t.services.plugins.load();
    const staff = await t.staffHeaders();
    expect((await t.request({ method: 'GET', url: '/api/v1/BookingResources', headers: staff.headers })).statusCode).toBe(404);
    expect((await t.request({ method: 'POST', url: '/api/v1/Booking', headers: staff.headers, payload: {} })).statusCode).toBe(404);
  });
});
