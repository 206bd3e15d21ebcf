import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { Kysely, Migration } from 'kysely';
import type { ContentResealer } from '../accounts/vault/rotation.js';
import type { ProtectionLevelSource } from '../accounts/vault/window.js';
import type { Action } from '../actions/define.js';
import { pluginOf } from '../actions/registry.js';
import type { CommandGroup } from '../cli/context.js';
import type { DB } from '../db/types.js';
import type { Model } from '../models/define.js';
import type { FixedEndpoint } from '../openapi/endpoints.js';
import type { Services } from '../services.js';
import type { ManagementHandler } from '../surfaces/management/define.js';
import type { SettingDefinition } from '../settings/definitions.js';
import type { TaskDefinition } from '../tasks/scheduler.js';
import { PluginError } from '../settings/plugins.js';

/** What a plugin's tasks may use: the services the scheduler is built from. */
export type PluginTaskServices = Pick<Services, 'config' | 'database' | 'db' | 'clock' | 'settings' | 'plugins' | 'tiers'>;

/**
 * Everything a plugin adds, declared in `src/plugins/{name}/index.ts` as its default export. Core code
 * never imports a plugin: this contract is how a plugin's parts reach the registries, and each part is
 * reachable only while the plugin is active (actions, models, API routes and pages answer as if they did
 * not exist, tasks do not run, CLI commands refuse). Its tier features live in plugins/{name}/
 * tier_features.json beside its manifest, as before.
 */
export interface PluginModule {
  /** The plugin's folder name, and the name in plugins/{name}/plugin.json. */
  name: string;
  /** Settings the plugin reads (named after the contract, else prefixed with the plugin's name). */
  settings?: SettingDefinition[];
  /** Models; each must declare `plugin: name`. */
  models?: Model[];
  /** Actions, named '{name}/{action}'. */
  actions?: Action[];
  /**
   * Migrations, applied with the core's (tables exist whether or not the plugin is active, so activating
   * it needs no schema change on a running cluster). Stored as `plugin_{name}_{key}`; keys sort in order.
   */
  migrations?: Record<string, Migration>;
  /**
   * Routes inside the API's front controller scope (under /api/v1), e.g. a special channel. While the
   * plugin is inactive every one of them gets the API's answer for an unknown path.
   */
  apiRoutes?(api: FastifyInstance, services: Services): Promise<void>;
  /** How apiRoutes' paths appear in the OpenAPI document (GET /api/openapi.json), only while the plugin is active. */
  openApi?: FixedEndpoint[];
  /**
   * Read-only management endpoints (GET /management/{path}), declared with defineManagementHandler and
   * gated like the core's (machine key, superadmin owner). While the plugin is inactive they answer as
   * unknown endpoints and are left out of the root listing and the API document.
   */
  management?: ManagementHandler[];
  /** Server-rendered pages; while the plugin is inactive they get the site's not-found page. */
  webRoutes?(web: FastifyInstance, services: Services): Promise<void> | void;
  /** Scheduled tasks; the scheduler skips them while the plugin is inactive. */
  tasks?(services: PluginTaskServices): TaskDefinition[];
  /** The protection levels a user's content of this plugin has (feeds the vault's window caps). */
  protectionLevels?: ProtectionLevelSource;
  /**
   * Re-seals the plugin's content keys during a vault rotation (active or not: the content must stay
   * readable when the plugin is turned on again).
   */
  contentResealer?: ContentResealer;
  /**
   * Starts the plugin's long-running parts (a listener) in the server process only, never in the CLI or
   * by default in tests; returns how to stop them. Called at server start whether or not the plugin is
   * active: what it starts checks the plugin's state itself.
   */
  start?(services: Services): Promise<() => Promise<void>>;
  /** `npx gatehouse {group} ...` command groups, with their usage lines. */
  cli?: Record<string, { usage: readonly string[]; group: CommandGroup }>;
}

export function definePlugin(module: PluginModule): PluginModule {
  return module;
}

export class PluginModuleError extends Error {}

/** src/plugins (dist/plugins once built): each plugin with code has a folder here with an index module. */
const CODE_DIR = path.dirname(fileURLToPath(import.meta.url));

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

/**
 * Puts each plugin's settings, models and actions into the core registries, once per process. The
 * registries are imported here, at run time, so that their modules never wait on a plugin's.
 */
async function install(modules: PluginModule[]): Promise<void> {
  const [{ registerSettingDefinitions }, { models }, { actionRegistry }] = await Promise.all([
    import('../settings/registry.js'),
    import('../models/index.js'),
    import('../actions/index.js'),
  ]);
  for (const m of modules) registerSettingDefinitions(m.settings ?? []);
  for (const m of modules) for (const model of m.models ?? []) models.add(model);
  for (const m of modules) for (const action of m.actions ?? []) actionRegistry.register(action);
}

let loading: Promise<PluginModule[]> | undefined;
let loaded: PluginModule[] = [];
let codeDir = CODE_DIR;

/** Tests load fixture plugins from their own folder; only before the first load in the process. */
export function usePluginCodeDir(dir: string): void {
  if (loading) throw new PluginModuleError('plugin modules are already loaded');
  codeDir = dir;
}

/** Every plugin module, loaded and installed into the registries on first use. */
export function pluginModules(): Promise<PluginModule[]> {
  loading ??= importModules(codeDir).then(async (modules) => {
    await install(modules);
    loaded = modules;
    return modules;
  });
  return loading;
}

/** The plugin modules once pluginModules() has loaded them (the app is built after that); before, none. */
export function loadedPluginModules(): readonly PluginModule[] {
  return loaded;
}

/** Each plugin's management handlers with its plugin's name. */
export function pluginManagementHandlers(modules: readonly PluginModule[]): Array<{ plugin: string; handler: ManagementHandler }> {
  return modules.flatMap((m) => (m.management ?? []).map((handler) => ({ plugin: m.name, handler })));
}

/** The plugins' migrations under their stored names. */
export function pluginMigrations(modules: PluginModule[]): Record<string, Migration> {
  const out: Record<string, Migration> = {};
  for (const m of modules) {
    for (const [key, migration] of Object.entries(m.migrations ?? {})) out[`plugin_${m.name}_${key}`] = migration;
  }
  return out;
}

/** A protection level source that answers only while its plugin is active. */
export function activeOnly(services: Pick<Services, 'plugins'>, name: string, source: ProtectionLevelSource): ProtectionLevelSource {
  return async (db: Kysely<DB>, userId: number) => (services.plugins.isActive(name) ? source(db, userId) : []);
}

/** For a plugin's CLI commands: refused (exit 2) while the plugin is inactive, as its other parts are. */
export function requireActivePlugin(services: Pick<Services, 'plugins'>, name: string): void {
  if (!services.plugins.isActive(name)) throw new PluginError(`plugin ${name} is not active; turn it on with \`npx gatehouse plugin enable ${name}\``);
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
