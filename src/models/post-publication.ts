import { sql, type Kysely } from 'kysely';
import { deferredWrite } from '../db/deferred-write.js';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { formatTimestamp } from '../lib/time.js';
import { newEventId, recordEvent } from '../outbound/events.js';
import type { TaskDefinition } from '../tasks/scheduler.js';

interface PostRow {
  pst_post_id: number;
  pst_title: string | null;
  pst_link: string | null;
  pst_usr_user_id: number | null;
  pst_is_published: boolean | null;
  pst_published_time: Date | null;
  pst_tier_min_level: number | null;
  pst_delete_time: Date | null;
}

/** Posts a task run publishes at most; the next run takes the rest. */
const BATCH = 200;

/** Published for readers: published, and its publish time (if any) reached (models/common.ts publishedPost). */
const isPublishedAt = (p: PostRow, now: Date) =>
  p.pst_delete_time === null && p.pst_is_published === true && (p.pst_published_time === null || p.pst_published_time.getTime() <= now.getTime());

/**
 * Writes post.published once for a post that readers can now see, in the caller's transaction: the
 * marker row (ppe_post_publication_events) is the once, whoever gets there first (a CRUD write or the
 * scheduled task on any node); the other finds it and writes nothing. A post taken out of publication
 * (unpublished, or its publish time moved into the future) loses its marker, so its next publication is
 * a new event. The marker names its event from the start (the event's id is chosen first), so nothing is
 * written back to it. Returns whether the event was written.
 *
 * `created`: the row of a post this transaction created, as its insert returned it. It is not read again,
 * and no marker can exist for it (no other transaction sees the post yet), so there is nothing to remove
 * and nothing to contend for: the marker and the event go to the database with the transaction's next
 * statement (deferredWrite), and a marker found after all fails the transaction rather than doubling the
 * event.
 */
export async function recordPostPublication(trx: Kysely<DB>, clock: Clock, postId: number, created?: Record<string, unknown>): Promise<boolean> {
  const post = created ? (created as unknown as PostRow) : await readPost(trx, postId);
  if (!post || post.pst_delete_time !== null) return false;
  const now = clock.now();
  if (!isPublishedAt(post, now)) {
    if (!created) await trx.deleteFrom('ppe_post_publication_events').where('ppe_pst_post_id', '=', postId).execute();
    return false;
  }
  const eventId = newEventId();
  const marker = trx
    .insertInto('ppe_post_publication_events')
    .values({ ppe_pst_post_id: postId, ppe_published_time: post.pst_published_time, ppe_create_time: now, ppe_obe_uid: eventId });
  if (created) {
    await deferredWrite(trx, marker);
  } else {
    const marked = await marker
      .onConflict((oc) => oc.column('ppe_pst_post_id').doNothing())
      .returning('ppe_pst_post_id')
      .executeTakeFirst();
    if (!marked) return false;
  }
  await recordEvent(
    trx,
    clock,
    'post.published',
    {
      post_id: Number(post.pst_post_id),
      title: post.pst_title,
      link: post.pst_link,
      author_user_id: post.pst_usr_user_id === null ? null : Number(post.pst_usr_user_id),
      published_time: formatTimestamp(post.pst_published_time ?? now),
      tier_min_level: post.pst_tier_min_level === null ? null : Number(post.pst_tier_min_level),
    },
    { id: eventId },
  );
  return true;
}

async function readPost(trx: Kysely<DB>, postId: number): Promise<PostRow | undefined> {
  const res = await sql<PostRow>`
    select pst_post_id, pst_title, pst_link, pst_usr_user_id, pst_is_published, pst_published_time, pst_tier_min_level, pst_delete_time
    from pst_posts where pst_post_id = ${postId}`.execute(trx);
  return res.rows[0];
}

/** Writes post.published for every post whose publish time has passed without its event, each in its own transaction. */
export async function publishDuePosts(db: Kysely<DB>, clock: Clock): Promise<{ published: number }> {
  const now = clock.now();
  const due = await sql<{ pst_post_id: number }>`
    select pst_post_id from pst_posts
    where pst_is_published = true and pst_delete_time is null and (pst_published_time is null or pst_published_time <= ${now})
      and not exists (select 1 from ppe_post_publication_events where ppe_pst_post_id = pst_post_id)
    order by pst_published_time nulls first, pst_post_id
    limit ${BATCH}`.execute(db);
  let published = 0;
  for (const { pst_post_id: id } of due.rows) {
    if (await db.transaction().execute((trx) => recordPostPublication(trx, clock, Number(id)))) published++;
  }
  return { published };
}

/** Scheduled publication: a post whose publish time passes gets its post.published event within a minute. */
export const postPublicationTask: TaskDefinition = {
  name: 'post_publication_events',
  description: 'Write post.published for posts whose scheduled publish time has passed',
  intervalSeconds: 60,
  run: async ({ db, clock }) => ({ ...(await publishDuePosts(db, clock)) }),
};
