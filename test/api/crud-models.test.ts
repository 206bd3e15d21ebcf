import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { models } from '../../src/models/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

describe('model declarations', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  it('declare only columns that exist, with the declared primary key, on every table', async () => {
    const rows = await sql<{ table_name: string; column_name: string }>`
      select table_name, column_name from information_schema.columns where table_schema = current_schema()`.execute(t.services.db);
    const byTable = new Map<string, Set<string>>();
    for (const r of rows.rows) {
      if (!byTable.has(r.table_name)) byTable.set(r.table_name, new Set());
      byTable.get(r.table_name)!.add(r.column_name);
    }
    for (const m of models.all()) {
      const cols = byTable.get(m.table);
      expect(cols, m.table).toBeDefined();
      for (const c of Object.keys(m.columns)) expect(cols!.has(c), `${m.className}.${c}`).toBe(true);
      if (m.deleteColumn) expect(cols!.has(m.deleteColumn)).toBe(true);
    }
  });

  it('index every owner column', async () => {
    const rows = await sql<{ indexdef: string }>`select indexdef from pg_indexes where schemaname = current_schema()`.execute(t.services.db);
    const defs = rows.rows.map((r) => r.indexdef);
    for (const m of models.all()) {
      if (!m.owner) continue;
      expect(defs.some((d) => d.includes(`${m.table} USING`) && d.includes(`(${m.owner}`)), `${m.className} ${m.owner}`).toBe(true);
    }
  });
});
