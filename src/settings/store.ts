import type { Kysely } from 'kysely';
import type { Clock } from '../lib/clock.js';
import type { DB } from '../db/types.js';
import {
  SettingError,
  decodeSettingValue,
  encodeSettingValue,
  settingDefinition,
  validateSettingValue,
  allSettingDefinitions,
} from './registry.js';

/** Where the settings live: a write to it, by any process, reloads every node's settings (see ReadCaches.reloadOn). */
export const SETTINGS_TABLE = 'stg_settings';

/**
 * Settings read from a per-node cache (reads are synchronous and free on the hot path). A write updates
 * this node at once; a write by another node or by the CLI through the socket reloads it on that write's
 * notification (see ReadCaches.reloadOn), and requests wait for that reload.
 */
export class Settings {
  private values = new Map<string, unknown>();
  /** Bumped by every write through this node, so a reload that read the table before the write is dropped. */
  private writes = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
  ) {}

  async load(): Promise<void> {
    const writesBefore = this.writes;
    const rows = await this.db.selectFrom('stg_settings').select(['stg_name', 'stg_value']).execute();
    // A write landed while the rows were on their way: they may predate it; the next reload is current.
    if (this.writes !== writesBefore) return;
    const next = new Map<string, unknown>();
    for (const row of rows) {
      const def = settingDefinition(row.stg_name);
      if (def) next.set(row.stg_name, decodeSettingValue(def, row.stg_value));
    }
    this.values = next;
  }

  get(name: string): unknown {
    const def = settingDefinition(name);
    if (!def) throw new SettingError(`unknown setting ${name}`);
    return this.values.has(name) ? this.values.get(name) : def.default;
  }

  bool(name: string): boolean {
    return this.get(name) === true;
  }

  int(name: string): number {
    return this.get(name) as number;
  }

  string(name: string): string {
    return this.get(name) as string;
  }

  json<T>(name: string): T {
    return this.get(name) as T;
  }

  /** Validates and stores a value; throws SettingError for unknown names and ill-typed values. */
  async set(name: string, value: unknown, db: Kysely<DB> = this.db): Promise<unknown> {
    const def = settingDefinition(name);
    if (!def) throw new SettingError(`unknown setting ${name}`);
    const canonical = validateSettingValue(def, value);
    const now = this.clock.now();
    await db
      .insertInto('stg_settings')
      .values({ stg_name: name, stg_value: encodeSettingValue(def, canonical), stg_create_time: now, stg_update_time: now })
      .onConflict((oc) => oc.column('stg_name').doUpdateSet({ stg_value: encodeSettingValue(def, canonical), stg_update_time: now }))
      .execute();
    this.writes++;
    this.values.set(name, canonical);
    return canonical;
  }

  /** All settings with their current values; secret ones are reported only as set or not. */
  snapshot(): Array<{ name: string; value: unknown; secret: boolean }> {
    return allSettingDefinitions().map((def) => {
      const value = this.get(def.name);
      return def.secret ? { name: def.name, value: value === '' ? '' : '(set)', secret: true } : { name: def.name, value, secret: false };
    });
  }
}
