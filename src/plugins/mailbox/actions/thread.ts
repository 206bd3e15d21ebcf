import { actingUser } from '../../../actions/account/user.js';
import { defineAction } from '../../../actions/define.js';
import { mailboxesOf } from '../mailboxes.js';
import { openContent } from '../messages.js';
import { messagesOf, ownThread, readerOf } from '../views.js';

/** One thread of the caller's: its metadata and its messages, oldest first, opened or `(locked)`. */
export default defineAction({
  name: 'mailbox/thread',
  description: 'Read one of your threads: its metadata and every message (sender, recipients, subject, body; (locked) placeholders while your vault is locked)',
  mutates: false,
  auth: { capability: 'read' },
  input: { thread_id: { type: 'int', min: 1, required: true } },
  async run(ctx) {
    const { db, input } = ctx;
    const { box, meta } = await ownThread(db, await mailboxesOf(db, actingUser(ctx.user).usr_user_id), input.thread_id);
    const reader = readerOf(ctx);
    const messages = [];
    let locked = false;
    for (const m of await messagesOf(db, [meta.thread_id])) {
      const c = await openContent(m, box.ownerUserId, reader);
      locked ||= c.locked;
      messages.push({
        message_id: m.mbm_mailbox_message_id,
        thread_id: meta.thread_id,
        direction: m.mbm_direction,
        sender: c.sender,
        recipients: c.recipients,
        subject: c.subject,
        body: c.body,
        read: m.mbm_is_read,
        size_bytes: Number(m.mbm_size_bytes),
        attachment_count: m.mbm_attachment_count,
        time: m.mbm_message_time,
        locked: c.locked,
      });
    }
    const opened = box.level !== 'standard' && messages.some((x) => !x.locked);
    return { data: { thread: { ...meta, security_level: box.level }, messages, locked }, ...(opened ? { sealedFor: [box.ownerUserId] } : {}) };
  },
});
