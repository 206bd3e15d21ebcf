import type { PluginState } from '../../actions/registry.js';
import type { ManagementHandler } from './define.js';
import backupsFetch from './handlers/backups/fetch.js';
import backupsList from './handlers/backups/list.js';
import databases from './handlers/databases.js';
import errorsRecent from './handlers/errors/recent.js';
import health from './handlers/health.js';
import root from './handlers/root.js';
import stats from './handlers/stats.js';
import tiersAudit from './handlers/tiers/audit.js';
import storeConflicts from './handlers/store/conflicts.js';
import storeDrift from './handlers/store/drift.js';
import storeUnresolved from './handlers/store/unresolved.js';
import version from './handlers/version.js';

/**
 * Every management endpoint. A handler's path is its file's path under handlers/ (root.ts is the root),
 * so nested paths are subfolders; a test holds the two together.
 */
export const managementHandlers: readonly ManagementHandler[] = Object.freeze([
  root,
  health,
  stats,
  version,
  databases,
  errorsRecent,
  backupsList,
  backupsFetch,
  tiersAudit,
  storeConflicts,
  storeDrift,
  storeUnresolved,
]);

const byPath = new Map(managementHandlers.map((h) => [h.path, h]));
if (byPath.size !== managementHandlers.length) throw new Error('two management handlers share a path');

/** A plugin's management handler, with its plugin's name. */
export interface PluginManagementHandler {
  plugin: string;
  handler: ManagementHandler;
}

/** Each plugin's management handlers with its plugin's name. */
export function pluginManagementHandlers(modules: ReadonlyArray<{ name: string; management?: ManagementHandler[] }>): PluginManagementHandler[] {
  return modules.flatMap((m) => (m.management ?? []).map((handler) => ({ plugin: m.name, handler })));
}

/** The core's handlers and those of the plugins active now. A plugin may not take a core path. */
export function availableManagementHandlers(plugins: PluginState, pluginHandlers: readonly PluginManagementHandler[]): ManagementHandler[] {
  const out = [...managementHandlers];
  for (const { plugin, handler } of pluginHandlers) {
    if (byPath.has(handler.path)) throw new Error(`plugin ${plugin}: management path '${handler.path}' belongs to the core`);
    if (plugins.isActive(plugin)) out.push(handler);
  }
  return out;
}

export function findManagementHandler(path: string, plugins: PluginState, pluginHandlers: readonly PluginManagementHandler[]): ManagementHandler | undefined {
  const core = byPath.get(path);
  if (core) return core;
  const found = pluginHandlers.find((p) => p.handler.path === path);
  return found && plugins.isActive(found.plugin) ? found.handler : undefined;
}
