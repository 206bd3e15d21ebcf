import { actingUser } from '../../../actions/account/user.js';
import { defineAction } from '../../../actions/define.js';
import { mailboxesOf, notFound } from '../mailboxes.js';
import { openContent } from '../messages.js';
import { mailboxDb } from '../tables.js';
import { readerOf } from '../views.js';

/** The date a Received: header ends with ("...; Tue, 3 Mar 2026 10:00:00 +0000"), or null. */
function hopTime(hop: string): Date | null {
  const at = hop.lastIndexOf(';');
  if (at < 0) return null;
  const d = new Date(hop.slice(at + 1).trim());
  return Number.isNaN(d.getTime()) ? null : d;
}

/**
 * A message's delivery timeline: its delivery events (received, queued, relayed, delivered, deferred,
 * bounced, opened) and, when its content can be opened, the hops of its Received: headers. While sealed
 * content is locked the hops are left out and locked is true.
 */
export default defineAction({
  name: 'mailbox/message_timeline',
  description: 'The delivery timeline of one of your messages: {events, notes, locked}; each event {time, kind, title, detail, meta}',
  mutates: false,
  auth: { capability: 'read' },
  input: {
    message_id: { type: 'int', min: 1, required: true },
    refresh_delivery: { type: 'int', options: [0, 1] },
  },
  async run(ctx) {
    const { db, input } = ctx;
    const boxes = await mailboxesOf(db, actingUser(ctx.user).usr_user_id);
    const mdb = mailboxDb(db);
    const m = await mdb
      .selectFrom('mbm_mailbox_messages')
      .innerJoin('mbt_mailbox_threads', 'mbt_mailbox_thread_id', 'mbm_mbt_mailbox_thread_id')
      .selectAll('mbm_mailbox_messages')
      .where('mbm_mailbox_message_id', '=', input.message_id)
      .where('mbm_delete_time', 'is', null)
      .where('mbt_delete_time', 'is', null)
      .executeTakeFirst();
    const box = m ? boxes.find((b) => b.id === m.mbm_mbx_mailbox_id) : undefined;
    if (!m || !box) throw notFound('message');
    const content = await openContent(m, box.ownerUserId, readerOf(ctx));
    const stored = await mdb
      .selectFrom('mde_mailbox_delivery_events')
      .select(['mde_kind', 'mde_time', 'mde_title', 'mde_detail', 'mde_meta'])
      .where('mde_mbm_mailbox_message_id', '=', m.mbm_mailbox_message_id)
      .orderBy('mde_time')
      .orderBy('mde_mailbox_delivery_event_id')
      .execute();
    const events: Array<{ time: Date | null; kind: string; title: string; detail: string; meta: Record<string, unknown> }> = stored.map((e) => ({
      time: e.mde_time,
      kind: e.mde_kind,
      title: e.mde_title,
      detail: e.mde_detail ?? '',
      meta: e.mde_meta ?? {},
    }));
    const notes: string[] = [];
    if (content.hops === null) {
      notes.push('Header hops are sealed with your vault; unlock it to see them.');
    } else {
      // Received: headers are newest first; the timeline reads oldest first.
      [...content.hops].reverse().forEach((hop, i) => {
        events.push({ time: hopTime(hop), kind: 'received', title: `Hop ${i + 1}`, detail: hop, meta: { source: 'header' } });
      });
    }
    if (input.refresh_delivery === 1) notes.push('No relay reports delivery status for this message yet; the events shown are all that is known.');
    events.sort((a, b) => (a.time?.getTime() ?? Number.MAX_SAFE_INTEGER) - (b.time?.getTime() ?? Number.MAX_SAFE_INTEGER));
    const opened = m.mbm_sealed_key !== null && !content.locked;
    return { data: { message_id: m.mbm_mailbox_message_id, events, notes, locked: content.locked }, ...(opened ? { sealedFor: [box.ownerUserId] } : {}) };
  },
});
