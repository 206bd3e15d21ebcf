import { describe, expect, it } from 'vitest';
import { PreparedStatementNames } from '../../src/db/database.js';

describe('prepared statement names (PostgreSQL)', () => {
  it('names a statement with an explicit column list, the same name for the same text and another for another', () => {
    const names = new PreparedStatementNames();
    const a = names.nameFor('select "apk_api_key_id", "usr_email" from "apk_api_keys" where "apk_public_key" = $1');
    expect(a).toMatch(/^gh_[0-9a-f]{16}$/);
    expect(names.nameFor('select "apk_api_key_id", "usr_email" from "apk_api_keys" where "apk_public_key" = $1')).toBe(a);
    expect(names.nameFor('select "apk_api_key_id" from "apk_api_keys" where "apk_public_key" = $1')).not.toBe(a);
  });

  it('leaves select-star texts unnamed (their cached plan breaks once a column is added), but not count(*)', () => {
    const names = new PreparedStatementNames();
    for (const text of ['select * from "pst_posts"', 'select "pst_posts".* from "pst_posts"', 'select pst_posts.*, 1 from pst_posts', 'select (*) from x']) {
      expect(names.nameFor(text), text).toBeUndefined();
    }
    expect(names.nameFor('select count(*) as "n" from "pst_posts" where "pst_delete_time" is null')).toMatch(/^gh_/);
  });

  it('names at most MAX distinct texts; later ones run unnamed, earlier ones keep their names', () => {
    const names = new PreparedStatementNames();
    const first = names.nameFor('select "c0" from "t"');
    for (let i = 1; i < PreparedStatementNames.MAX; i++) expect(names.nameFor(`select "c${i}" from "t"`)).toBeDefined();
    expect(names.nameFor('select "one_too_many" from "t"')).toBeUndefined();
    expect(names.nameFor('select "c0" from "t"')).toBe(first);
  });
});
