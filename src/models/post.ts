import { maxVisibleTierLevel, publishedPost, publishedPostRow, staffOnly, standardTimes } from './common.js';
import { col, defineModel } from './define.js';
import { recordPostPublication } from './post-publication.js';

// pst_usr_user_id is the author (stamped from the caller on POST); writes are staff-only all the same.
export const Post = defineModel({
  className: 'Post',
  table: 'pst_posts',
  prefix: 'pst',
  primaryKey: 'pst_post_id',
  owner: 'pst_usr_user_id',
  columns: {
    pst_post_id: col.serial(),
    pst_title: col.varchar(255),
    pst_link: col.varchar(255),
    pst_usr_user_id: col.bigint({ required: true }),
    pst_body: col.text(),
    pst_is_published: col.bool(),
    pst_published_time: col.timestamp(),
    pst_is_on_homepage: col.bool(),
    pst_is_pinned: col.bool(),
    pst_short_description: col.varchar(255),
    pst_fil_file_id: col.bigint(),
    pst_tier_min_level: col.int(),
    pst_tier_public_after_hours: col.int(),
    ...standardTimes('pst'),
  },
  exposure: { readable: true, writable: true, publicRead: true },
  checks: { write: staffOnly },
  viewable: publishedPost,
  viewableRow: publishedPostRow,
  viewableTimes: ['pst_published_time'],
  gate: { minLevel: 'pst_tier_min_level', publicAfterHours: 'pst_tier_public_after_hours', publishedTime: 'pst_published_time', body: ['pst_body'] },
  filters: { max_visible_tier_level: maxVisibleTierLevel('pst_tier_min_level') },
  // post.published when a write makes the post visible to readers (a later publish time: the task's).
  // A create's `after` is the row as the insert returned it, so it is not read again.
  afterWrite: async ({ op, id, after }, ctx) => {
    if (op !== 'delete') await recordPostPublication(ctx.trx, ctx.clock, id, op === 'create' ? after : undefined);
  },
});
