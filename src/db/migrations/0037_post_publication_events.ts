import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// post.published is written once per publication (DESIGN 15): a marker row per post records that its
// event was written, so the scheduled task (on any node) and a CRUD write never write it twice. A post
// taken back out of publication loses its marker, so publishing it again is a new event. Posts already
// published when this runs are marked: they were published before events existed.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table ppe_post_publication_events (
      ppe_pst_post_id int8 primary key references pst_posts(pst_post_id) on delete cascade,
      ppe_obe_uid varchar(40),
      ppe_published_time timestamp(6),
      ppe_create_time timestamp(6) not null default now()
    )`,
    `insert into ppe_post_publication_events (ppe_pst_post_id, ppe_published_time)
      select pst_post_id, pst_published_time from pst_posts
      where pst_is_published = true and (pst_published_time is null or pst_published_time <= now())`,
    `create index pst_posts_due_publication on pst_posts (pst_published_time) where pst_is_published = true and pst_delete_time is null`,
  ]);
}
