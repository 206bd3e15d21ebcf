import { authContractProblems } from './auth-contract.js';
import type { Action } from './define.js';
import { guardProblems } from './guards.js';
import { schemaProblems } from './input.js';
import { settingDefinition } from '../settings/registry.js';

export class ActionDefinitionError extends Error {}

const CORE_NAME = /^[a-z][a-z0-9_]*$/;
const PLUGIN_NAME = /^[a-z][a-z0-9_]*\/[a-z][a-z0-9_]*$/;

/** How a requested name resolves: an action, logic that was never given a descriptor, or nothing. */
export type ActionLookup = { kind: 'action'; action: Action } | { kind: 'undescribed'; name: string } | { kind: 'unknown' };

export interface PluginState {
  isActive(name: string): boolean;
}

/** The plugin an action needs: the namespace of a '{plugin}/{action}' name, else its declared plugin. */
export function pluginOf(action: Pick<Action, 'name' | 'plugin'>): string | null {
  const slash = action.name.indexOf('/');
  return slash >= 0 ? action.name.slice(0, slash) : (action.plugin ?? null);
}

/** Everything wrong with an action's declaration; an action with any problem is never registered. */
export function actionProblems(action: Action): string[] {
  const d = action.descriptor;
  const problems: string[] = [];
  if (!CORE_NAME.test(action.name) && !PLUGIN_NAME.test(action.name)) problems.push(`name must be 'action' or 'plugin/action' in snake_case`);
  if (action.plugin && action.name.includes('/') && !action.name.startsWith(`${action.plugin}/`)) problems.push(`plugin '${action.plugin}' contradicts the name's namespace`);
  if (typeof d.description !== 'string' || d.description.trim() === '') problems.push('description is required');
  if (typeof d.mutates !== 'boolean') problems.push('mutates must be true or false');
  if (d.requires_setting !== null && !settingDefinition(d.requires_setting)) problems.push(`requires_setting names unknown setting '${d.requires_setting}'`);
  if (d.input) problems.push(...schemaProblems(d.input));
  problems.push(...authContractProblems(d.auth));
  problems.push(...guardProblems(action));
  return problems;
}

/**
 * The one registry of actions. Core actions answer by name; plugin actions as '{plugin}/{action}' and
 * only while the plugin is active; otherwise the lookup is the same 'unknown' as a name never registered.
 */
export class ActionRegistry {
  private readonly actions = new Map<string, Action>();
  private readonly undescribed = new Set<string>();

  constructor(actions: Action[] = []) {
    for (const a of actions) this.register(a);
  }

  /** Refuses a contradictory or malformed descriptor, so a bad action stops the process at start. */
  register(action: Action): this {
    const problems = actionProblems(action);
    if (problems.length > 0) throw new ActionDefinitionError(`action ${action.name}: ${problems.join('; ')}`);
    if (this.actions.has(action.name)) throw new ActionDefinitionError(`action ${action.name} is registered twice`);
    this.actions.set(action.name, action);
    return this;
  }

  /** Logic that exists without an API descriptor: requests for it are told which descriptor is missing. */
  registerUndescribed(name: string): this {
    this.undescribed.add(name);
    return this;
  }

  unregister(name: string): void {
    this.actions.delete(name);
    this.undescribed.delete(name);
  }

  resolve(name: string, plugins: PluginState): ActionLookup {
    const slash = name.indexOf('/');
    if (slash >= 0 && !plugins.isActive(name.slice(0, slash))) return { kind: 'unknown' };
    const action = this.actions.get(name);
    if (action) {
      const plugin = pluginOf(action);
      return plugin === null || plugins.isActive(plugin) ? { kind: 'action', action } : { kind: 'unknown' };
    }
    if (this.undescribed.has(name)) return { kind: 'undescribed', name };
    return { kind: 'unknown' };
  }

  /** Registered actions reachable now (plugin active), by name. */
  available(plugins: PluginState): Action[] {
    return [...this.actions.values()]
      .filter((a) => {
        const plugin = pluginOf(a);
        return plugin === null || plugins.isActive(plugin);
      })
      .sort((a, b) => a.name.localeCompare(b.name));
  }
}
