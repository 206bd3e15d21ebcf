import { standardTimes, viewableParent } from './common.js';
import { col, defineModel } from './define.js';
import { Post } from './post.js';

const onViewablePost = viewableParent(Post, 'cmt_pst_post_id');

// Public read; written by its owner (the default check) or staff.
export const Comment = defineModel({
  className: 'Comment',
  table: 'cmt_comments',
  prefix: 'cmt',
  primaryKey: 'cmt_comment_id',
  owner: 'cmt_usr_user_id',
  columns: {
    cmt_comment_id: col.serial(),
    cmt_comment_id_parent: col.bigint(),
    cmt_usr_user_id: col.bigint(),
    cmt_author_name: col.varchar(255),
    cmt_pst_post_id: col.bigint({ required: true }),
    cmt_body: col.text({ required: true }),
    cmt_created_time: col.timestamp(),
    cmt_is_approved: col.bool(),
    ...standardTimes('cmt'),
  },
  // Approval is moderation, not the author's to set.
  exposure: { readable: true, writable: true, publicRead: true, unwritable: ['cmt_is_approved', 'cmt_created_time'] },
  // Approved (its author sees it while it awaits moderation), on a post the reader may see: live,
  // published, and its tier gate open to the reader.
  viewable: (eb, reader) =>
    eb.and([eb.or([eb('cmt_is_approved', '=', true), eb('cmt_usr_user_id', '=', reader.viewer.current_user_id)]), onViewablePost(eb, reader)]),
});
