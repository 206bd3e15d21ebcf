import type { Kysely } from 'kysely';
import { newContentKey, read, resealContentKey, sealField, type SealedReader } from '../../accounts/vault/sealed.js';
import { lockVault, type Vault } from '../../accounts/vault/vaults.js';
import type { DB } from '../../db/types.js';
import { inTransaction } from '../../tiers/transaction.js';
import { folderOf, type Mailbox } from './mailboxes.js';
import { mailboxDb, type DeliveryEventKind } from './tables.js';

// Storing and reading messages. Content columns (sender, recipients, subject, body, header hops) are
// sealed through the vault's sealed-record helper when the mailbox is above `standard`.

export const MESSAGE_TABLE = 'mbm_mailbox_messages';
export const SEALED_FIELDS = ['mbm_sender', 'mbm_recipients', 'mbm_subject', 'mbm_body', 'mbm_hops'] as const;
export type SealedField = (typeof SEALED_FIELDS)[number];
export type MessageContent = Record<SealedField, string | null>;
/** What a locked reader sees instead of sealed content (DESIGN 11). */
export const LOCKED = '(locked)';

export class MailboxSealError extends Error {}

/**
 * The owner's vault to seal to, held shared until the caller's transaction commits (lockVault), so a
 * rotation cannot switch the key between this read and the commit of the sealed row. Taken before the
 * transaction writes any row of the mailbox.
 */
async function vaultToSealTo(db: Kysely<DB>, ownerUserId: number): Promise<Vault> {
  const vault = await lockVault(db, ownerUserId, 'seal');
  if (!vault) throw new MailboxSealError('the mailbox owner has no vault to seal to');
  return vault;
}

/** Seals the content of message `id` to this vault (from vaultToSealTo): the sealed key and the sealed columns. */
export function sealContent(vault: Vault, id: number, content: MessageContent): MessageContent & { mbm_sealed_key: string } {
  const record = { table: MESSAGE_TABLE, id };
  const { contentKey, sealedKey } = newContentKey(vault, record);
  const out = { mbm_sealed_key: sealedKey } as MessageContent & { mbm_sealed_key: string };
  for (const f of SEALED_FIELDS) out[f] = content[f] === null ? null : sealField(contentKey, record, f, content[f]);
  return out;
}

export interface NewMessage {
  direction: 'inbound' | 'outbound';
  messageIdHeader: string | null;
  inReplyTo: string | null;
  references: string[];
  sender: string;
  recipients: string;
  subject: string;
  body: string;
  hops: string[];
  sizeBytes: number;
  attachmentCount: number;
  time: Date;
  /** The thread a reply or compose goes into (the caller's own). */
  threadId?: number | null;
  read?: boolean;
  event?: { kind: DeliveryEventKind; title: string; detail?: string | null; meta?: Record<string, unknown> };
}

export type Delivered = { duplicate: false; messageId: number; threadId: number } | { duplicate: true; messageId: number; threadId: number };

async function existing(db: Kysely<DB>, mailboxId: number, messageIdHeader: string) {
  return mailboxDb(db)
    .selectFrom('mbm_mailbox_messages')
    .select(['mbm_mailbox_message_id', 'mbm_mbt_mailbox_thread_id'])
    .where('mbm_mbx_mailbox_id', '=', mailboxId)
    .where('mbm_message_id_header', '=', messageIdHeader)
    .executeTakeFirst();
}

/** The live thread holding one of these Message-IDs (In-Reply-To first, then References, latest first). */
async function threadByHeaders(db: Kysely<DB>, mailboxId: number, ids: string[]): Promise<number | null> {
  if (ids.length === 0) return null;
  const row = await mailboxDb(db)
    .selectFrom('mbm_mailbox_messages')
    .innerJoin('mbt_mailbox_threads', 'mbt_mailbox_thread_id', 'mbm_mbt_mailbox_thread_id')
    .select('mbm_mbt_mailbox_thread_id')
    .where('mbm_mbx_mailbox_id', '=', mailboxId)
    .where('mbm_message_id_header', 'in', ids)
    .where('mbt_delete_time', 'is', null)
    .orderBy('mbm_message_time', 'desc')
    .executeTakeFirst();
  return row?.mbm_mbt_mailbox_thread_id ?? null;
}

/**
 * Stores a message in a mailbox: threaded by its headers (or into the given thread), idempotent per
 * Message-ID within the mailbox, sealed when the mailbox is above standard. Runs in the caller's transaction.
 */
export async function deliver(db: Kysely<DB>, box: Mailbox, m: NewMessage): Promise<Delivered> {
  const sealed = box.level !== 'standard';
  // Sealed delivery reads the vault key and writes the sealed row in one transaction.
  if (sealed && !db.isTransaction) return inTransaction(db, (trx) => deliver(trx, box, m));
  const vault = sealed ? await vaultToSealTo(db, box.ownerUserId) : null;
  const mdb = mailboxDb(db);
  if (m.messageIdHeader) {
    const found = await existing(db, box.id, m.messageIdHeader);
    if (found) return { duplicate: true, messageId: found.mbm_mailbox_message_id, threadId: found.mbm_mbt_mailbox_thread_id };
  }
  const folderRole = m.direction === 'inbound' ? 'inbox' : 'sent';
  let threadId = m.threadId ?? (await threadByHeaders(db, box.id, [m.inReplyTo, ...[...m.references].reverse()].filter((x): x is string => !!x)));
  if (threadId === null) {
    const folder = await folderOf(db, box.id, folderRole);
    const t = await mdb
      .insertInto('mbt_mailbox_threads')
      .values({ mbt_mbx_mailbox_id: box.id, mbt_mbf_mailbox_folder_id: folder, mbt_last_message_time: m.time, mbt_create_time: m.time, mbt_update_time: m.time })
      .returning('mbt_mailbox_thread_id')
      .executeTakeFirstOrThrow();
    threadId = t.mbt_mailbox_thread_id;
  } else {
    // An inbound reply brings a thread that was only in Sent into the inbox.
    const sent = m.direction === 'inbound' ? await folderOf(db, box.id, 'sent') : null;
    const inbox = m.direction === 'inbound' ? await folderOf(db, box.id, 'inbox') : null;
    await mdb
      .updateTable('mbt_mailbox_threads')
      .set((eb) => ({
        mbt_last_message_time: eb.fn('greatest', ['mbt_last_message_time', eb.val(m.time)]),
        mbt_update_time: m.time,
        ...(sent !== null && inbox !== null
          ? { mbt_mbf_mailbox_folder_id: eb.case().when('mbt_mbf_mailbox_folder_id', '=', sent).then(inbox).else(eb.ref('mbt_mbf_mailbox_folder_id')).end() }
          : {}),
      }))
      .where('mbt_mailbox_thread_id', '=', threadId)
      .execute();
  }
  const content: MessageContent = {
    mbm_sender: m.sender,
    mbm_recipients: m.recipients,
    mbm_subject: m.subject,
    mbm_body: m.body,
    mbm_hops: m.hops.length > 0 ? JSON.stringify(m.hops) : null,
  };
  const inserted = await mdb
    .insertInto('mbm_mailbox_messages')
    .values({
      mbm_mbt_mailbox_thread_id: threadId,
      mbm_mbx_mailbox_id: box.id,
      mbm_direction: m.direction,
      mbm_message_id_header: m.messageIdHeader,
      mbm_in_reply_to: m.inReplyTo,
      ...(sealed ? {} : content),
      mbm_size_bytes: m.sizeBytes,
      mbm_attachment_count: m.attachmentCount,
      mbm_is_read: m.read ?? m.direction === 'outbound',
      mbm_message_time: m.time,
      mbm_create_time: m.time,
    })
    .returning('mbm_mailbox_message_id')
    .executeTakeFirstOrThrow();
  const messageId = inserted.mbm_mailbox_message_id;
  if (vault) {
    await mdb.updateTable('mbm_mailbox_messages').set(sealContent(vault, messageId, content)).where('mbm_mailbox_message_id', '=', messageId).execute();
  }
  if (m.event) {
    await mdb
      .insertInto('mde_mailbox_delivery_events')
      .values({
        mde_mbm_mailbox_message_id: messageId,
        mde_kind: m.event.kind,
        mde_time: m.time,
        mde_title: m.event.title,
        mde_detail: m.event.detail ?? null,
        mde_meta: JSON.stringify(m.event.meta ?? {}),
      })
      .execute();
  }
  return { duplicate: false, messageId, threadId };
}

export interface StoredContent {
  mbm_mailbox_message_id: number;
  mbm_sealed_key: string | null;
  mbm_sender: string | null;
  mbm_recipients: string | null;
  mbm_subject: string | null;
  mbm_body: string | null;
  mbm_hops: string | null;
}

export interface OpenedContent {
  sender: string;
  recipients: string;
  subject: string;
  body: string;
  /** The Received: header hops; null when locked. */
  hops: string[] | null;
  locked: boolean;
}

/** A message's content for this reader: cleartext, or the `(locked)` placeholders when it cannot be opened now. */
export async function openContent(row: StoredContent, ownerUserId: number, reader: SealedReader): Promise<OpenedContent> {
  let values: MessageContent = row;
  if (row.mbm_sealed_key !== null) {
    const opened = await read({ table: MESSAGE_TABLE, id: row.mbm_mailbox_message_id, ownerUserId, sealedKey: row.mbm_sealed_key }, row, SEALED_FIELDS, reader);
    if (opened.content_locked) return { sender: LOCKED, recipients: LOCKED, subject: LOCKED, body: LOCKED, hops: null, locked: true };
    values = opened;
  }
  return {
    sender: values.mbm_sender ?? '',
    recipients: values.mbm_recipients ?? '',
    subject: values.mbm_subject ?? '',
    body: values.mbm_body ?? '',
    hops: values.mbm_hops ? (JSON.parse(values.mbm_hops) as string[]) : [],
    locked: false,
  };
}

/** Re-seals the cleartext messages of mailboxes above standard, a batch at a time; returns how many. */
export async function resealBatch(db: Kysely<DB>, batch = 200): Promise<number> {
  const mdb = mailboxDb(db);
  const rows = await mdb
    .selectFrom('mbm_mailbox_messages')
    .innerJoin('mbx_mailboxes', 'mbx_mailbox_id', 'mbm_mbx_mailbox_id')
    .select(['mbm_mailbox_message_id', 'mbx_usr_user_id', ...SEALED_FIELDS])
    .where('mbm_sealed_key', 'is', null)
    .where('mbx_security_level', '!=', 'standard')
    .orderBy('mbm_mailbox_message_id')
    .limit(batch)
    .execute();
  // One transaction per message: the vault key is read under the vault's shared lock and the sealed row
  // committed before a rotation can switch the key (a rotation waits, then re-seals it).
  for (const r of rows) {
    await inTransaction(db, async (trx) => {
      const vault = await vaultToSealTo(trx, r.mbx_usr_user_id);
      await mailboxDb(trx)
        .updateTable('mbm_mailbox_messages')
        .set(sealContent(vault, r.mbm_mailbox_message_id, r))
        .where('mbm_mailbox_message_id', '=', r.mbm_mailbox_message_id)
        .where('mbm_sealed_key', 'is', null)
        .execute();
    });
  }
  return rows.length;
}

/** A vault rotation: each sealed message's content key is re-sealed to the new public key. */
export async function resealForRotation(db: Kysely<DB>, input: { userId: number; oldSecretKey: Buffer; newPublicKey: Buffer }): Promise<void> {
  const mdb = mailboxDb(db);
  const rows = await mdb
    .selectFrom('mbm_mailbox_messages')
    .innerJoin('mbx_mailboxes', 'mbx_mailbox_id', 'mbm_mbx_mailbox_id')
    .select(['mbm_mailbox_message_id', 'mbm_sealed_key'])
    .where('mbx_usr_user_id', '=', input.userId)
    .where('mbm_sealed_key', 'is not', null)
    .execute();
  for (const r of rows) {
    const resealed = resealContentKey({ table: MESSAGE_TABLE, id: r.mbm_mailbox_message_id, sealedKey: r.mbm_sealed_key! }, input.oldSecretKey, input.newPublicKey);
    if (resealed) await mdb.updateTable('mbm_mailbox_messages').set({ mbm_sealed_key: resealed }).where('mbm_mailbox_message_id', '=', r.mbm_mailbox_message_id).execute();
  }
}
