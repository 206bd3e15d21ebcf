import { actingUser } from '../../../actions/account/user.js';
import { defineAction } from '../../../actions/define.js';
import { provisionedMailboxes } from '../mailboxes.js';
import { mailboxDb } from '../tables.js';
import { windowOpen } from '../views.js';

/** The caller's mailboxes, each with its security level and whether its content is locked for them now. */
export default defineAction({
  name: 'mailbox/mailboxes',
  description: "List your mailboxes (your first call creates your default one) with each mailbox's security_level and locked state",
  mutates: true,
  auth: { capability: 'read' },
  async run(ctx) {
    const me = actingUser(ctx.user);
    const boxes = await provisionedMailboxes(ctx.db, ctx.settings, me.usr_user_id, ctx.clock.now());
    const open = await windowOpen(ctx);
    const unread = await mailboxDb(ctx.db)
      .selectFrom('mbm_mailbox_messages')
      .innerJoin('mbt_mailbox_threads', 'mbt_mailbox_thread_id', 'mbm_mbt_mailbox_thread_id')
      .select((eb) => ['mbm_mbx_mailbox_id', eb.fn.countAll<number>().as('unread')])
      .where('mbm_mbx_mailbox_id', 'in', boxes.map((b) => b.id))
      .where('mbm_is_read', '=', false)
      .where('mbm_delete_time', 'is', null)
      .where('mbt_delete_time', 'is', null)
      .groupBy('mbm_mbx_mailbox_id')
      .execute();
    const mailboxes = boxes.map((b) => ({
      mailbox_id: b.id,
      address: b.address,
      security_level: b.level,
      is_default: b.isDefault,
      locked: b.level !== 'standard' && !open,
      unread_count: Number(unread.find((u) => u.mbm_mbx_mailbox_id === b.id)?.unread ?? 0),
      create_time: b.createTime,
    }));
    return { data: { mailboxes, locked: mailboxes.some((m) => m.locked) } };
  },
});
