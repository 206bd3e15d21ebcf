import type { Kysely } from 'kysely';
import type { DB } from '../../../db/types.js';
import type { Settings } from '../../../settings/store.js';
import { actingUser } from '../../../actions/account/user.js';
import { defineAction, type Attachment } from '../../../actions/define.js';
import { validationError } from '../../../http/errors.js';
import { randomHex } from '../../../lib/crypto.js';
import { mailboxByAddress, mailboxesOf, ownMailbox } from '../mailboxes.js';
import { deliver } from '../messages.js';
import { mailboxDb } from '../tables.js';
import { ownThread, windowOpen } from '../views.js';

/** DESIGN 11: at most 10 files, 10 MB each, 25 MB together (decimal units, as every size on the site). */
export const ATTACHMENT_LIMITS = { files: 10, fileBytes: 10_000_000, totalBytes: 25_000_000 };
const EMAIL_RE = /^[^\s@<>,;]+@[^\s@<>,;]+\.[^\s@<>,;]+$/;
/** An address whose domain is one host name label (`42@localhost`): valid only for a domain mailboxes live in. */
const LOCAL_DOMAIN_RE = /^[^\s@<>,;]+@([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)$/i;

function checkAttachments(files: Attachment[]): void {
  if (files.length > ATTACHMENT_LIMITS.files) throw validationError({ attachments: `at most ${ATTACHMENT_LIMITS.files} files` });
  const big = files.find((f) => f.data.length > ATTACHMENT_LIMITS.fileBytes);
  if (big) throw validationError({ attachments: `${big.filename} is larger than 10 MB` });
  const total = files.reduce((n, f) => n + f.data.length, 0);
  if (total > ATTACHMENT_LIMITS.totalBytes) throw validationError({ attachments: 'the files together are larger than 25 MB' });
}

/**
 * The recipients, split on `,` and `;`. An address needs a dotted domain, except in a domain this
 * service keeps mailboxes in: the `mailbox_domain` setting (`localhost` by default, so members' default
 * addresses `{user id}@localhost` are valid) or the address of a live mailbox (one provisioned under an
 * earlier `mailbox_domain`, or made by staff).
 */
async function recipientsOf(ctx: { db: Kysely<DB>; settings: Settings }, raw: string): Promise<string[]> {
  const list = raw.split(/[,;]/).map((s) => s.trim()).filter(Boolean);
  if (list.length === 0) throw validationError({ to: 'at least one address' });
  if (list.length > 50) throw validationError({ to: 'at most 50 addresses' });
  const mailboxDomain = ctx.settings.string('mailbox_domain').trim().toLowerCase();
  for (const a of list) {
    if (EMAIL_RE.test(a)) continue;
    const local = LOCAL_DOMAIN_RE.exec(a);
    if (local && (local[1]!.toLowerCase() === mailboxDomain || (await mailboxByAddress(ctx.db, a)))) continue;
    throw validationError({ to: `not an email address: ${a}` });
  }
  return list;
}

/**
 * Sends mail from one of the caller's mailboxes through the mailer and keeps the sent copy in their thread
 * (sealed when the mailbox is above standard). A Fortress mailbox composes only with an open vault
 * window: without one the answer is {locked: true} and nothing is sent or stored.
 */
export default defineAction({
  name: 'mailbox/send',
  description: 'Send mail from your mailbox (multipart with attachments[]: at most 10 files, 10 MB each, 25 MB total); a Fortress mailbox answers {locked: true} while your vault is locked',
  mutates: true,
  accepts_files: true,
  input: {
    mailbox_id: { type: 'int', min: 1 },
    thread_id: { type: 'int', min: 1 },
    to: { type: 'string', required: true, max_length: 4000 },
    subject: { type: 'string', max_length: 998 },
    body: { type: 'text', max_length: 1_000_000 },
  },
  async run(ctx) {
    const { db, input, clock } = ctx;
    const me = actingUser(ctx.user);
    const to = await recipientsOf(ctx, input.to);
    checkAttachments(ctx.attachments);
    const boxes = await mailboxesOf(db, me.usr_user_id);
    const thread = input.thread_id ? await ownThread(db, boxes, input.thread_id) : null;
    const box = thread ? thread.box : await ownMailbox(db, me.usr_user_id, input.mailbox_id);
    if (box.level === 'fortress' && !(await windowOpen(ctx))) {
      return { data: { locked: true, sent: false, mailbox_id: box.id }, message: 'Unlock your vault to send from this mailbox.' };
    }
    const now = clock.now();
    const subject = input.subject ?? '';
    const body = input.body ?? '';
    const messageId = `<${randomHex(16)}@${box.address.split('@')[1] ?? 'localhost'}>`;
    const inReplyTo = thread
      ? ((
          await mailboxDb(db)
            .selectFrom('mbm_mailbox_messages')
            .select('mbm_message_id_header')
            .where('mbm_mbt_mailbox_thread_id', '=', thread.meta.thread_id)
            .where('mbm_message_id_header', 'is not', null)
            .orderBy('mbm_message_time', 'desc')
            .executeTakeFirst()
        )?.mbm_message_id_header ?? null)
      : null;
    const sizeBytes = Buffer.byteLength(body, 'utf8') + ctx.attachments.reduce((n, f) => n + f.data.length, 0);
    const stored = await deliver(db, box, {
      direction: 'outbound',
      messageIdHeader: messageId,
      inReplyTo,
      references: [],
      sender: box.address,
      recipients: to.join(', '),
      subject,
      body,
      hops: [],
      sizeBytes,
      attachmentCount: ctx.attachments.length,
      time: now,
      threadId: thread?.meta.thread_id ?? null,
      read: true,
      event: { kind: 'queued', title: 'Queued', detail: `Handed to the mailer for ${to.length} recipient${to.length === 1 ? '' : 's'}`, meta: { recipients: to.length } },
    });
    ctx.mail({
      to: to.join(', '),
      from: box.address,
      subject,
      text: body,
      template: 'mailbox_send',
      messageId,
      ...(inReplyTo ? { inReplyTo } : {}),
      ...(ctx.attachments.length > 0 ? { attachments: ctx.attachments.map((f) => ({ filename: f.filename, contentType: f.mimetype, content: f.data })) } : {}),
    });
    return {
      data: { locked: false, sent: true, mailbox_id: box.id, thread_id: stored.threadId, message_id: stored.messageId, attachment_count: ctx.attachments.length, size_bytes: sizeBytes },
      message: 'Sent.',
    };
  },
});
