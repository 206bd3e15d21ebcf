import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { PLUGINS_DIR } from '../lib/paths.js';

export interface PluginManifest {
  name: string;
  version: string;
  description: string;
}


export class PluginError extends Error {}

/** Reads every plugins/{name}/plugin.json; a folder whose manifest is missing or malformed is refused. */
export function discoverPlugins(dir = PLUGINS_DIR): PluginManifest[] {
  if (!existsSync(dir)) return [];
  const out: PluginManifest[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const file = path.join(dir, entry.name, 'plugin.json');
    if (!existsSync(file)) continue;
    let manifest: Partial<PluginManifest>;
    try {
      manifest = JSON.parse(readFileSync(file, 'utf8')) as Partial<PluginManifest>;
    } catch (e) {
      throw new PluginError(`${file}: not valid JSON (${(e as Error).message})`);
    }
    if (manifest.name !== entry.name) throw new PluginError(`${file}: name must be '${entry.name}'`);
    if (typeof manifest.version !== 'string') throw new PluginError(`${file}: version must be a string`);
    out.push({ name: entry.name, version: manifest.version, description: String(manifest.description ?? '') });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** Where the plugin flags live: a write to it, by any process, reloads every node's flags. */
export const PLUGINS_TABLE = 'plg_plugins';

/**
 * Which plugins are active. Flags live in plg_plugins; reads come from a per-node cache refreshed with
 * the settings (on their table's change notification) and updated at once by this node's own writes.
 */
export class Plugins {
  private active = new Set<string>();
  /** Bumped by every write through this node, so a reload that read the table before the write is dropped. */
  private writes = 0;
  readonly manifests: PluginManifest[];

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    dir = PLUGINS_DIR,
  ) {
    this.manifests = discoverPlugins(dir);
  }

  async load(): Promise<void> {
    const writesBefore = this.writes;
    const rows = await this.db.selectFrom('plg_plugins').select(['plg_name', 'plg_is_active']).execute();
    if (this.writes !== writesBefore) return;
    this.active = new Set(rows.filter((r) => r.plg_is_active).map((r) => r.plg_name));
  }

  isKnown(name: string): boolean {
    return this.manifests.some((m) => m.name === name);
  }

  isActive(name: string): boolean {
    return this.isKnown(name) && this.active.has(name);
  }

  list(): Array<PluginManifest & { active: boolean }> {
    return this.manifests.map((m) => ({ ...m, active: this.active.has(m.name) }));
  }

  async setActive(name: string, active: boolean): Promise<void> {
    if (!this.isKnown(name)) throw new PluginError(`unknown plugin ${name}`);
    const now = this.clock.now();
    await this.db
      .insertInto('plg_plugins')
      .values({ plg_name: name, plg_is_active: active, plg_update_time: now })
      .onConflict((oc) => oc.column('plg_name').doUpdateSet({ plg_is_active: active, plg_update_time: now }))
      .execute();
    this.writes++;
    if (active) this.active.add(name);
    else this.active.delete(name);
  }
}
