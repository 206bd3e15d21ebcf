import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pluginMigrations, pluginModuleProblems, usePluginCodeDir } from '../../src/boot/plugins.js';
import type { PluginModule } from '../../src/plugin-kit/contract.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const fixtures = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', 'fixtures');
// Before anything loads the plugin modules: this file's process sees only the fixture plugin.
usePluginCodeDir(path.join(fixtures, 'plugin-code'));

describe('a plugin module: every part registers through the contract and exists only while the plugin is active', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ pluginsDir: path.join(fixtures, 'plugin-manifests') });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('while inactive: its action, API route and page answer as unknown, and its task does not run', async () => {
    const staff = await t.staffHeaders();
    const action = await t.request({ method: 'POST', url: '/api/v1/action/demo/echo', headers: staff.headers, payload: {} });
    const unknownAction = await t.request({ method: 'POST', url: '/api/v1/action/demo/nothing', headers: staff.headers, payload: {} });
    expect(action.statusCode).toBe(404);
    expect(action.json.errortype).toBe(unknownAction.json.errortype);

    const channel = await t.request({ method: 'GET', url: '/api/v1/demo/channel' });
    const unknownPath = await t.request({ method: 'GET', url: '/api/v1/demo/elsewhere' });
    expect(channel.statusCode).toBe(404);
    expect(channel.json).toEqual({ ...unknownPath.json, error: unknownPath.json.error.replace('/demo/elsewhere', '/demo/channel') });

    const pageRes = await t.request({ method: 'GET', url: '/demo' });
    expect(pageRes.statusCode).toBe(404);
    expect(pageRes.body).toContain('There is no page here.');

    const [outcome] = await t.services.scheduler.runNow('demo_tick');
    expect(outcome).toEqual({ task: 'demo_tick', skipped: 'plugin_inactive', plugin: 'demo' });
  });

  it('while active: its setting is known, and its action, API route, page and task answer', async () => {
    await t.services.plugins.setActive('demo', true);
    await t.services.settings.set('demo_greeting', 'good morning');
    const staff = await t.staffHeaders();
    const action = await t.request({ method: 'POST', url: '/api/v1/action/demo/echo', headers: staff.headers, payload: {} });
    expect(action.statusCode).toBe(200);
    expect(action.json.data).toEqual({ greeting: 'good morning' });

    const channel = await t.request({ method: 'GET', url: '/api/v1/demo/channel' });
    expect(channel.statusCode).toBe(200);
    expect(channel.json.data).toEqual({ greeting: 'good morning' });

    const pageRes = await t.request({ method: 'GET', url: '/demo' });
    expect(pageRes.statusCode).toBe(200);
    expect(pageRes.body).toContain('demo page');

    const [outcome] = await t.services.scheduler.runNow('demo_tick');
    expect(outcome).toEqual({ task: 'demo_tick', result: { ticked: true } });

    await t.services.plugins.setActive('demo', false);
    expect((await t.request({ method: 'GET', url: '/api/v1/demo/channel' })).statusCode).toBe(404);
  });
});

describe('plugin module declarations', () => {
  const base: PluginModule = { name: 'mine' };
  it('are refused when the name is not the folder, or an action or model belongs to another plugin', () => {
    expect(pluginModuleProblems(base, 'mine')).toEqual([]);
    expect(pluginModuleProblems(base, 'other')).toEqual([`name must be 'other' (its folder)`]);
    const stray = { name: 'theirs/thing', plugin: null } as unknown as NonNullable<PluginModule['actions']>[number];
    expect(pluginModuleProblems({ ...base, actions: [stray] }, 'mine')).toEqual([`action theirs/thing must be named 'mine/...' (or declare plugin 'mine')`]);
    const model = { className: 'Thing', plugin: 'theirs' } as unknown as NonNullable<PluginModule['models']>[number];
    expect(pluginModuleProblems({ ...base, models: [model] }, 'mine')).toEqual([`model Thing must declare plugin 'mine'`]);
  });

  it('migrations are stored as plugin_{name}_{key}, after every core migration', () => {
    const up = async () => {};
    const names = Object.keys(pluginMigrations([{ name: 'mine', migrations: { '0001_init': { up }, '0002_more': { up } } }]));
    expect(names).toEqual(['plugin_mine_0001_init', 'plugin_mine_0002_more']);
    expect(names.every((n) => n > '9999')).toBe(true);
  });
});
