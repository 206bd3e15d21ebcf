import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// The site's posts and pages carry a feature image URL (the staff editor, the Ghost import). It is a
// column of the site, not of the contract: the Post and Page models do not declare it, so the CRUD API's
// keys stay the contract's.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `alter table pst_posts add column pst_feature_image varchar(1000)`,
    `alter table pag_pages add column pag_feature_image varchar(1000)`,
  ]);
}
