import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DB } from '../../src/db/types.js';
import type { Model, ViewableReader } from '../../src/models/define.js';
import { Event } from '../../src/models/event.js';
import { Page } from '../../src/models/page.js';
import { Post } from '../../src/models/post.js';
import { loadRow } from '../../src/surfaces/crud/query.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const NOW = new Date('2026-03-01T12:00:00Z');
const TIMES = [null, '2026-03-01 11:59:59.999', '2026-03-01 12:00:00', '2026-03-01 12:00:00.001', '2027-01-01 00:00:00'];
const reader: ViewableReader = { viewer: { current_user_id: 1, current_user_permission: 0 }, tierLevel: null, now: NOW };

/**
 * A single read served from the row cache asks the model's is-viewable check of the row in memory
 * (viewableRow); the database asks the SQL check (viewable). Both must agree on every row, or a cached
 * read would answer differently: each shape of row is read both ways here.
 */
describe('in-memory is-viewable checks agree with the SQL ones', () => {
  let t: TestApp;
  let userId: number;
  beforeAll(async () => {
    t = await createTestApp();
    userId = (await t.createUser()).userId;
  });
  afterAll(async () => t.close());

  async function agree(model: Model, ids: number[]): Promise<void> {
    let admitted = 0;
    for (const id of ids) {
      // Inside a transaction no cache serves the read: this is the SQL check.
      const bySql = await t.services.db.transaction().execute((trx) => loadRow(trx as Kysely<DB>, model, id, false, reader));
      const stored = await t.services.db.transaction().execute((trx) => loadRow(trx as Kysely<DB>, model, id));
      expect(model.viewableRow!(stored!, reader), `${model.className} ${id}: ${JSON.stringify(stored)}`).toBe(bySql !== undefined);
      // And the cached read (the row cache, then viewableRow) answers as the SQL did.
      expect((await loadRow(t.services.db, model, id, false, reader)) !== undefined).toBe(bySql !== undefined);
      if (bySql) admitted++;
    }
    // Both answers occur among the rows, so the comparison means something.
    expect(admitted).toBeGreaterThan(0);
    expect(admitted).toBeLessThan(ids.length);
  }

  async function insert(table: string, values: Record<string, unknown>, key: string): Promise<number> {
    const columns = Object.keys(values);
    const row = await sql<{ id: number }>`insert into ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))})
      values (${sql.join(columns.map((c) => values[c]))}) returning ${sql.ref(key)} as id`.execute(t.services.db);
    return Number(row.rows[0]!.id);
  }

  it('Post: published, and its publish time (when set) reached', async () => {
    const ids: number[] = [];
    for (const published of [null, false, true]) {
      for (const time of TIMES) {
        ids.push(await insert('pst_posts', { pst_usr_user_id: userId, pst_title: 'p', pst_is_published: published, pst_published_time: time }, 'pst_post_id'));
      }
    }
    await agree(Post, ids);
  });

  it('Page: its publish time set and reached', async () => {
    const ids: number[] = [];
    for (const time of TIMES) ids.push(await insert('pag_pages', { pag_title: 'p', pag_published_time: time }, 'pag_page_id'));
    await agree(Page, ids);
  });

  it('Event: not private (visibility 0)', async () => {
    const ids: number[] = [];
    for (const visibility of [null, 0, 1, 2, -1]) ids.push(await insert('evt_events', { evt_name: 'e', evt_visibility: visibility }, 'evt_event_id'));
    await agree(Event, ids);
  });
});
