import { defineAction } from '../define.js';
import { changesSince } from '../../drive/changes-feed.js';

/**
 * The caller's change feed: what happened to their files and folders after `cursor` (the last change they
 * have seen), oldest first. `reset: true` means the cursor is older than the retained 90 days: list the
 * Drive again and continue from the cursor given. Without a cursor the feed starts at its oldest
 * retained change; call again with the answer's cursor until no changes come.
 */
export default defineAction({
  name: 'drive_changes',
  description: 'Changes to your Drive files and folders after cursor; reset: true means list everything again',
  requires_setting: 'drive_active',
  mutates: false,
  input: {
    cursor: { type: 'int', min: 0 },
  },
  async run({ input, user: me, db, clock }) {
    return { data: { ...(await changesSince(db, me.usr_user_id, input.cursor ?? 0, clock.now())) } };
  },
});
