import type { FastifyInstance } from 'fastify';
import type { Migration } from 'kysely';
import type { ContentResealer } from '../accounts/vault/rotation.js';
import type { ProtectionLevelSource } from '../accounts/vault/window.js';
import type { Action } from '../actions/define.js';
import type { CommandGroup } from '../cli/context.js';
import type { Model } from '../models/define.js';
import type { FixedEndpoint } from '../openapi/endpoints.js';
import type { Services } from '../services.js';
import type { ManagementHandler } from '../surfaces/management/define.js';
import type { SettingDefinition } from '../settings/definitions.js';
import { PluginError } from '../settings/plugins.js';
import type { TaskDefinition } from '../tasks/scheduler.js';

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
  /** Links to the plugin's member pages for the signed-in top bar (label, site path), shown while it is active. */
  memberLinks?: Array<{ label: string; path: string }>;
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

/** For a plugin's CLI commands: refused (exit 2) while the plugin is inactive, as its other parts are. */
export function requireActivePlugin(services: Pick<Services, 'plugins'>, name: string): void {
  if (!services.plugins.isActive(name)) throw new PluginError(`plugin ${name} is not active; turn it on with \`npx gatehouse plugin enable ${name}\``);
}
