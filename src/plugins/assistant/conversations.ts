import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { BlobStore } from '../../drive/blobs/index.js';
import { businessError } from '../../http/errors.js';
import { formatTimestamp } from '../../lib/time.js';
import { readBlob, textOf, type ChatFile } from './attachments.js';
import { messageBytes, userTurn, type ProviderMessage } from './provider.js';
import { assistantTables, type MessageStatus } from './tables.js';

/** Another member's conversation answers exactly as one that does not exist. */
export const noSuchConversation = () => businessError('No such conversation', { reason: 'not_found' });

/** The member's live conversation, locked for update when asked; null when it is not theirs or not there. */
export async function ownConversation(db: Kysely<DB>, userId: number, conversationId: number, opts: { forUpdate?: boolean } = {}) {
  let query = assistantTables(db)
    .selectFrom('asc_assistant_conversations')
    .selectAll()
    .where('asc_assistant_conversation_id', '=', conversationId)
    .where('asc_usr_user_id', '=', userId)
    .where('asc_delete_time', 'is', null);
  if (opts.forUpdate) query = query.forUpdate();
  return (await query.executeTakeFirst()) ?? null;
}

export function titleOf(message: string): string {
  return Array.from(message.replace(/\s+/g, ' ').trim()).slice(0, 100).join('');
}

export async function createConversation(db: Kysely<DB>, userId: number, title: string, now: Date): Promise<number> {
  const row = await assistantTables(db)
    .insertInto('asc_assistant_conversations')
    .values({ asc_usr_user_id: userId, asc_title: title, asc_create_time: now, asc_update_time: now })
    .returning('asc_assistant_conversation_id')
    .executeTakeFirstOrThrow();
  return row.asc_assistant_conversation_id;
}

export async function addMessage(
  db: Kysely<DB>,
  message: { conversationId: number; role: 'user' | 'assistant'; body: string; status: MessageStatus; model?: string | null; time: Date },
): Promise<number> {
  const t = assistantTables(db);
  const row = await t
    .insertInto('asm_assistant_messages')
    .values({
      asm_asc_assistant_conversation_id: message.conversationId,
      asm_role: message.role,
      asm_body: message.body,
      asm_status: message.status,
      asm_model: message.model ?? null,
      asm_create_time: message.time,
      asm_update_time: message.time,
    })
    .returning('asm_assistant_message_id')
    .executeTakeFirstOrThrow();
  await t.updateTable('asc_assistant_conversations').set({ asc_update_time: message.time }).where('asc_assistant_conversation_id', '=', message.conversationId).execute();
  return row.asm_assistant_message_id;
}

export async function linkAttachment(db: Kysely<DB>, messageId: number, fileId: number, position: number, now: Date): Promise<void> {
  await assistantTables(db)
    .insertInto('asa_assistant_attachments')
    .values({ asa_asm_assistant_message_id: messageId, asa_fil_file_id: fileId, asa_position: position, asa_create_time: now })
    .execute();
}

export async function setMessageStatus(db: Kysely<DB>, messageId: number, status: MessageStatus, failure: string | null, now: Date): Promise<void> {
  await assistantTables(db)
    .updateTable('asm_assistant_messages')
    .set({ asm_status: status, asm_failure: failure, asm_update_time: now })
    .where('asm_assistant_message_id', '=', messageId)
    .execute();
}

/** Messages answered or answering: what the provider is shown of the conversation's past. */
const HISTORY_STATUSES: MessageStatus[] = ['answered', 'complete'];
/** How far back a conversation's history is looked at, messages. */
const HISTORY_LOOKBACK = 400;

/**
 * The conversation's earlier turns for the provider, oldest first, within `budget` bytes: the newest
 * turns are kept and older ones left out once the next would not fit. Failed and pending messages got no
 * answer and are left out. A past member's text files are inlined again (read from the blob store).
 */
export async function historyFor(db: Kysely<DB>, blobs: BlobStore, conversationId: number, budget: number): Promise<ProviderMessage[]> {
  const t = assistantTables(db);
  const rows = await t
    .selectFrom('asm_assistant_messages')
    .select(['asm_assistant_message_id', 'asm_role', 'asm_body'])
    .where('asm_asc_assistant_conversation_id', '=', conversationId)
    .where('asm_status', 'in', HISTORY_STATUSES)
    .orderBy('asm_assistant_message_id', 'desc')
    .limit(HISTORY_LOOKBACK)
    .execute();
  const kept: ProviderMessage[] = [];
  let used = 0;
  for (const row of rows) {
    const turn = row.asm_role === 'assistant' ? { role: 'assistant' as const, content: row.asm_body } : userTurn(row.asm_body, await filesOf(db, blobs, row.asm_assistant_message_id));
    // One comma separates it from the next message.
    const size = messageBytes(turn) + 1;
    if (used + size > budget) break;
    used += size;
    kept.push(turn);
  }
  return kept.reverse();
}

async function filesOf(db: Kysely<DB>, blobs: BlobStore, messageId: number): Promise<ChatFile[]> {
  const rows = await assistantTables(db)
    .selectFrom('asa_assistant_attachments')
    .innerJoin('fil_files', 'fil_file_id', 'asa_fil_file_id')
    .leftJoin('fbb_file_blobs', 'fbb_file_blob_id', 'fil_fbb_file_blob_id')
    .select(['fil_name', 'fil_mime_type', 'fil_size_bytes', 'fbb_storage_key'])
    .where('asa_asm_assistant_message_id', '=', messageId)
    .orderBy('asa_position')
    .execute();
  const files: ChatFile[] = [];
  for (const r of rows) {
    const mimeType = r.fil_mime_type ?? 'application/octet-stream';
    const readable = r.fbb_storage_key && textOf(mimeType, Buffer.alloc(0)) !== null;
    files.push({
      name: r.fil_name ?? '',
      mimeType,
      sizeBytes: Number(r.fil_size_bytes ?? 0),
      text: readable ? textOf(mimeType, await readBlob(blobs, r.fbb_storage_key!)) : null,
    });
  }
  return files;
}

/** The whole conversation as chat_thread answers it. */
export async function threadOf(db: Kysely<DB>, conversation: { asc_assistant_conversation_id: number; asc_title: string; asc_create_time: Date; asc_update_time: Date }) {
  const t = assistantTables(db);
  const id = conversation.asc_assistant_conversation_id;
  const messages = await t
    .selectFrom('asm_assistant_messages')
    .select(['asm_assistant_message_id', 'asm_role', 'asm_body', 'asm_status', 'asm_failure', 'asm_create_time'])
    .where('asm_asc_assistant_conversation_id', '=', id)
    .orderBy('asm_assistant_message_id')
    .execute();
  const files = await t
    .selectFrom('asa_assistant_attachments')
    .innerJoin('asm_assistant_messages', 'asm_assistant_message_id', 'asa_asm_assistant_message_id')
    .innerJoin('fil_files', 'fil_file_id', 'asa_fil_file_id')
    .select(['asa_asm_assistant_message_id', 'fil_file_id', 'fil_name', 'fil_mime_type', 'fil_size_bytes'])
    .where('asm_asc_assistant_conversation_id', '=', id)
    .orderBy('asa_asm_assistant_message_id')
    .orderBy('asa_position')
    .execute();
  const byMessage = new Map<number, Array<{ file_id: number; name: string; mime_type: string | null; size_bytes: number }>>();
  for (const f of files) {
    const list = byMessage.get(f.asa_asm_assistant_message_id) ?? [];
    list.push({ file_id: Number(f.fil_file_id), name: f.fil_name ?? '', mime_type: f.fil_mime_type, size_bytes: Number(f.fil_size_bytes ?? 0) });
    byMessage.set(f.asa_asm_assistant_message_id, list);
  }
  return {
    conversation: { id, title: conversation.asc_title, create_time: formatTimestamp(conversation.asc_create_time), update_time: formatTimestamp(conversation.asc_update_time) },
    messages: messages.map((m) => ({
      id: Number(m.asm_assistant_message_id),
      role: m.asm_role,
      body: m.asm_body,
      status: m.asm_status,
      failure: m.asm_failure,
      create_time: formatTimestamp(m.asm_create_time),
      attachments: byMessage.get(m.asm_assistant_message_id) ?? [],
    })),
  };
}
