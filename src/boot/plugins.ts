import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Kysely, Migration } from 'kysely';
import type { ProtectionLevelSource } from '../accounts/vault/window.js';
import { actionRegistry } from '../actions/index.js';
import { pluginOf } from '../actions/registry.js';
import type { DB } from '../db/types.js';
import { migrateToLatest } from '../db/migrate.js';
import { PLUGIN_CODE_DIR } from '../lib/paths.js';
import { models } from '../models/index.js';
import type { PluginModule } from '../plugin-kit/contract.js';
import type { Services } from '../services.js';
import type { Plugins } from '../settings/plugins.js';
import { registerSettingDefinitions } from '../settings/registry.js';

export class PluginModuleError extends Error {}

function entryOf(dir: string, name: string): string | null {
  for (const file of ['index.js', 'index.ts']) {
    const entry = path.join(dir, name, file);
    if (existsSync(entry)) return entry;
  }
  return null;
}

/** Problems with a module's declaration; a plugin with any is refused at start. */
export function pluginModuleProblems(module: PluginModule, folder: string): string[] {
  const problems: string[] = [];
  if (module.name !== folder) problems.push(`name must be '${folder}' (its folder)`);
  for (const model of module.models ?? []) {
    if (model.plugin !== module.name) problems.push(`model ${model.className} must declare plugin '${module.name}'`);
  }
  for (const action of module.actions ?? []) {
    if (pluginOf(action) !== module.name) problems.push(`action ${action.name} must be named '${module.name}/...' (or declare plugin '${module.name}')`);
  }
  return problems;
}

async function importModules(dir: string): Promise<PluginModule[]> {
  if (!existsSync(dir)) return [];
  const out: PluginModule[] = [];
  const folders = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  for (const folder of folders) {
    const entry = entryOf(dir, folder);
    if (!entry) continue;
    const loaded = (await import(pathToFileURL(entry).href)) as { default?: PluginModule };
    const module = loaded.default;
    if (!module || typeof module !== 'object') throw new PluginModuleError(`${entry}: the default export must be definePlugin({...})`);
    const problems = pluginModuleProblems(module, folder);
    if (problems.length > 0) throw new PluginModuleError(`plugin ${folder}: ${problems.join('; ')}`);
    out.push(module);
  }
  return out;
}

/** Puts each plugin's settings, models and actions into the core registries, once per process. */
function install(modules: PluginModule[]): void {
  for (const m of modules) registerSettingDefinitions(m.settings ?? [], m.name);
  for (const m of modules) for (const model of m.models ?? []) models.add(model);
  for (const m of modules) for (const action of m.actions ?? []) actionRegistry.register(action);
}

let loading: Promise<PluginModule[]> | undefined;
let loaded: PluginModule[] = [];
let codeDir = PLUGIN_CODE_DIR;

/** Tests load fixture plugins from their own folder; only before the first load in the process. */
export function usePluginCodeDir(dir: string): void {
  if (loading) throw new PluginModuleError('plugin modules are already loaded');
  codeDir = dir;
}

/** Every plugin module, loaded and installed into the registries on first use. */
export function pluginModules(): Promise<PluginModule[]> {
  loading ??= importModules(codeDir).then((modules) => {
    install(modules);
    loaded = modules;
    return modules;
  });
  return loading;
}

/** The plugin modules once pluginModules() has loaded them (the app is built after that); before, none. */
export function loadedPluginModules(): readonly PluginModule[] {
  return loaded;
}

/** The plugins' migrations under their stored names. */
export function pluginMigrations(modules: PluginModule[]): Record<string, Migration> {
  const out: Record<string, Migration> = {};
  for (const m of modules) {
    for (const [key, migration] of Object.entries(m.migrations ?? {})) out[`plugin_${m.name}_${key}`] = migration;
  }
  return out;
}

/** Applies the core's migrations and every plugin's (named plugin_{name}_..., so they sort after the core's). */
export async function migrateWithPlugins(db: Kysely<any>): Promise<string[]> {
  return migrateToLatest(db, pluginMigrations(await pluginModules()));
}

/** A protection level source that answers only while its plugin is active. */
export function activeOnly(services: { plugins: Pick<Plugins, 'isActive'> }, name: string, source: ProtectionLevelSource): ProtectionLevelSource {
  return async (db: Kysely<DB>, userId: number) => (services.plugins.isActive(name) ? source(db, userId) : []);
}

/**
 * Starts every plugin's long-running parts (PluginModule.start); returns one stop for all of them, which
 * stops them newest first. A plugin that fails to start stops the ones started before it and rethrows.
 */
export async function startPlugins(modules: PluginModule[], services: Services): Promise<() => Promise<void>> {
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
  try {
    for (const m of modules) if (m.start) stops.push(await m.start(services));
  } catch (e) {
    await stopAll();
    throw e;
  }
  return stopAll;
}
