import type { Kysely } from 'kysely';
import type { SealedReader } from '../../accounts/vault/sealed.js';
import type { ActionContext } from '../../actions/define.js';
import { actingUser } from '../../actions/account/user.js';
import type { DB } from '../../db/types.js';
import { notFound, type Mailbox } from './mailboxes.js';
import { openContent } from './messages.js';
import { mailboxDb } from './tables.js';

// What the actions answer: metadata always, content opened for the reader or the `(locked)` placeholders.

/** The caller's means of opening sealed content: their browser session's vault window (API keys have none). */
export function readerOf(ctx: Pick<ActionContext, 'db' | 'web' | 'user'>): SealedReader & { userId: number } {
  return { db: ctx.db, window: ctx.web?.vault ?? null, userId: actingUser(ctx.user).usr_user_id };
}

/** Whether the caller's vault window is open now (no decrypt is counted). */
export async function windowOpen(ctx: Pick<ActionContext, 'db' | 'web' | 'user'>): Promise<boolean> {
  return ctx.web ? ctx.web.vault.isOpenFor(ctx.db, actingUser(ctx.user).usr_user_id) : false;
}

const SNIPPET_CHARS = 140;

export interface ThreadMeta {
  thread_id: number;
  mailbox_id: number;
  folder_id: number | null;
  folder: string | null;
  labels: string[];
  starred: boolean;
  message_count: number;
  unread_count: number;
  size_bytes: number;
  attachment_count: number;
  last_message_time: Date;
  create_time: Date;
}

export interface ThreadFilter {
  threadIds?: number[];
  folderId?: number | null;
  label?: string | null;
  starred?: boolean | null;
  limit?: number;
  offset?: number;
}

/** Thread metadata of a mailbox, newest first; deleted threads are left out. */
export async function threadMetas(db: Kysely<DB>, box: Mailbox, f: ThreadFilter = {}): Promise<{ threads: ThreadMeta[]; total: number }> {
  const mdb = mailboxDb(db);
  let q = mdb
    .selectFrom('mbt_mailbox_threads as t')
    .leftJoin('mbf_mailbox_folders as f', 'f.mbf_mailbox_folder_id', 't.mbt_mbf_mailbox_folder_id')
    .where('t.mbt_mbx_mailbox_id', '=', box.id)
    .where('t.mbt_delete_time', 'is', null);
  if (f.threadIds) q = q.where('t.mbt_mailbox_thread_id', 'in', f.threadIds.length > 0 ? f.threadIds : [-1]);
  if (f.folderId) q = q.where('t.mbt_mbf_mailbox_folder_id', '=', f.folderId);
  if (f.starred !== undefined && f.starred !== null) q = q.where('t.mbt_is_starred', '=', f.starred);
  if (f.label) {
    const label = f.label.toLowerCase();
    q = q.where((eb) =>
      eb.exists(
        eb
          .selectFrom('mtl_mailbox_thread_labels as tl')
          .innerJoin('mbl_mailbox_labels as l', 'l.mbl_mailbox_label_id', 'tl.mtl_mbl_mailbox_label_id')
          .select('tl.mtl_mbt_mailbox_thread_id')
          .whereRef('tl.mtl_mbt_mailbox_thread_id', '=', 't.mbt_mailbox_thread_id')
          .where((e) => e(e.fn('lower', ['l.mbl_name']), '=', label)),
      ),
    );
  }
  const { total } = await q.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
  const rows = await q
    .select(['t.mbt_mailbox_thread_id', 't.mbt_mbf_mailbox_folder_id', 't.mbt_is_starred', 't.mbt_last_message_time', 't.mbt_create_time', 'f.mbf_role', 'f.mbf_name'])
    .orderBy('t.mbt_last_message_time', 'desc')
    .orderBy('t.mbt_mailbox_thread_id', 'desc')
    .limit(f.limit ?? 50)
    .offset(f.offset ?? 0)
    .execute();
  const ids = rows.map((r) => r.mbt_mailbox_thread_id);
  const counts = ids.length
    ? await mdb
        .selectFrom('mbm_mailbox_messages')
        .select((eb) => [
          'mbm_mbt_mailbox_thread_id',
          eb.fn.countAll<number>().as('messages'),
          eb.fn.sum<number>(eb.case().when('mbm_is_read', '=', false).then(1).else(0).end()).as('unread'),
          eb.fn.sum<number>('mbm_size_bytes').as('size'),
          eb.fn.sum<number>('mbm_attachment_count').as('attachments'),
        ])
        .where('mbm_mbt_mailbox_thread_id', 'in', ids)
        .where('mbm_delete_time', 'is', null)
        .groupBy('mbm_mbt_mailbox_thread_id')
        .execute()
    : [];
  const labels = ids.length
    ? await mdb
        .selectFrom('mtl_mailbox_thread_labels')
        .innerJoin('mbl_mailbox_labels', 'mbl_mailbox_label_id', 'mtl_mbl_mailbox_label_id')
        .select(['mtl_mbt_mailbox_thread_id', 'mbl_name'])
        .where('mtl_mbt_mailbox_thread_id', 'in', ids)
        .orderBy('mbl_name')
        .execute()
    : [];
  const threads = rows.map((r): ThreadMeta => {
    const c = counts.find((x) => x.mbm_mbt_mailbox_thread_id === r.mbt_mailbox_thread_id);
    return {
      thread_id: r.mbt_mailbox_thread_id,
      mailbox_id: box.id,
      folder_id: r.mbt_mbf_mailbox_folder_id,
      folder: r.mbf_role ?? r.mbf_name ?? null,
      labels: labels.filter((l) => l.mtl_mbt_mailbox_thread_id === r.mbt_mailbox_thread_id).map((l) => l.mbl_name),
      starred: r.mbt_is_starred,
      message_count: Number(c?.messages ?? 0),
      unread_count: Number(c?.unread ?? 0),
      size_bytes: Number(c?.size ?? 0),
      attachment_count: Number(c?.attachments ?? 0),
      last_message_time: r.mbt_last_message_time,
      create_time: r.mbt_create_time,
    };
  });
  return { threads, total: Number(total) };
}

const MESSAGE_COLUMNS = [
  'mbm_mailbox_message_id',
  'mbm_mbt_mailbox_thread_id',
  'mbm_direction',
  'mbm_sealed_key',
  'mbm_sender',
  'mbm_recipients',
  'mbm_subject',
  'mbm_body',
  'mbm_hops',
  'mbm_size_bytes',
  'mbm_attachment_count',
  'mbm_is_read',
  'mbm_message_time',
] as const;

export async function messagesOf(db: Kysely<DB>, threadIds: number[], opts: { latestOnly?: boolean } = {}) {
  if (threadIds.length === 0) return [];
  let q = mailboxDb(db).selectFrom('mbm_mailbox_messages').select(MESSAGE_COLUMNS).where('mbm_mbt_mailbox_thread_id', 'in', threadIds).where('mbm_delete_time', 'is', null);
  if (opts.latestOnly) {
    q = q.distinctOn('mbm_mbt_mailbox_thread_id').orderBy('mbm_mbt_mailbox_thread_id').orderBy('mbm_message_time', 'desc').orderBy('mbm_mailbox_message_id', 'desc');
  } else {
    q = q.orderBy('mbm_message_time').orderBy('mbm_mailbox_message_id');
  }
  return q.execute();
}

/** One row of mailbox/thread_list: the thread's metadata and its latest message's sender and subject. */
export async function threadSummaries(db: Kysely<DB>, box: Mailbox, reader: SealedReader, f: ThreadFilter = {}) {
  const { threads, total } = await threadMetas(db, box, f);
  const latest = await messagesOf(db, threads.map((t) => t.thread_id), { latestOnly: true });
  let locked = false;
  const out = [];
  for (const t of threads) {
    const m = latest.find((x) => x.mbm_mbt_mailbox_thread_id === t.thread_id);
    const content = m ? await openContent(m, box.ownerUserId, reader) : null;
    if (content?.locked) locked = true;
    out.push({
      ...t,
      sender: content?.sender ?? '',
      subject: content?.subject ?? '',
      snippet: content ? (content.locked ? content.body : content.body.replace(/\s+/g, ' ').trim().slice(0, SNIPPET_CHARS)) : '',
      locked: content?.locked ?? false,
    });
  }
  return { threads: out, total, locked };
}

/** The caller's live thread in one of their mailboxes; anything else is not found. */
export async function ownThread(db: Kysely<DB>, boxes: Mailbox[], threadId: number): Promise<{ box: Mailbox; meta: ThreadMeta }> {
  const row = await mailboxDb(db)
    .selectFrom('mbt_mailbox_threads')
    .select('mbt_mbx_mailbox_id')
    .where('mbt_mailbox_thread_id', '=', threadId)
    .where('mbt_delete_time', 'is', null)
    .executeTakeFirst();
  const box = row ? boxes.find((b) => b.id === row.mbt_mbx_mailbox_id) : undefined;
  if (!box) throw notFound('thread');
  const { threads } = await threadMetas(db, box, { threadIds: [threadId], limit: 1 });
  if (!threads[0]) throw notFound('thread');
  return { box, meta: threads[0] };
}
