import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

describe('plugin models as CRUD resources', () => {
  const apps: TestApp[] = [];
  const dirs: string[] = [];
  afterAll(async () => {
    for (const a of apps) await a.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('serves the bookings models when the plugin is active from the start', async () => {
    const t = await createTestApp({ activePlugins: ['bookings'] });
    apps.push(t);
    const staff = await t.staffHeaders();
    const res = await t.request({ method: 'GET', url: '/api/v1/BookingResources', headers: staff.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ num_results: 0, page: 0, numperpage: 3, data: [] });
  });

  it('answers 404 for a plugin model whose plugin folder is absent, even with its flag set in the database', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-plugins-'));
    dirs.push(dir);
    const t = await createTestApp({ pluginsDir: dir });
    apps.push(t);
    await t.services.db.insertInto('plg_plugins').values({ plg_name: 'bookings', plg_is_active: true, plg_update_time: t.clock.now() }).execute();
    await t.services.plugins.load();
    const staff = await t.staffHeaders();
    expect((await t.request({ method: 'GET', url: '/api/v1/BookingResources', headers: staff.headers })).statusCode).toBe(404);
    expect((await t.request({ method: 'POST', url: '/api/v1/Booking', headers: staff.headers, payload: {} })).statusCode).toBe(404);
  });
});
