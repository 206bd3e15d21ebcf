import type { TaskDefinition } from '../tasks/scheduler.js';
import type { PluginModule, PluginTaskServices } from './contract.js';

/** Every plugin's scheduled tasks, each marked with its plugin: the scheduler skips it while inactive. */
export function pluginTasks(modules: PluginModule[], services: PluginTaskServices): TaskDefinition[] {
  return modules.flatMap((plugin) =>
    (plugin.tasks?.(services) ?? []).map((task) => ({ ...task, plugin: { name: plugin.name, isActive: () => services.plugins.isActive(plugin.name) } })),
  );
}
