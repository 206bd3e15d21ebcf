import type { Generated, Kysely } from 'kysely';
import type { DB, GeneratedTimestamp, Timestamp } from '../../db/types.js';

/** The assistant's tables (migration 0001_conversations); the core's DB type does not know them. */
export type AssistantTables = {
  asc_assistant_conversations: {
    asc_assistant_conversation_id: Generated<number>;
    asc_usr_user_id: number;
    asc_title: string;
    asc_create_time: GeneratedTimestamp;
    asc_update_time: GeneratedTimestamp;
    asc_delete_time: Timestamp | null;
  };
  asm_assistant_messages: {
    asm_assistant_message_id: Generated<number>;
    asm_asc_assistant_conversation_id: number;
    asm_role: MessageRole;
    asm_body: string;
    asm_status: MessageStatus;
    asm_failure: string | null;
    asm_model: string | null;
    asm_create_time: GeneratedTimestamp;
    asm_update_time: GeneratedTimestamp;
  };
  asa_assistant_attachments: {
    asa_assistant_attachment_id: Generated<number>;
    asa_asm_assistant_message_id: number;
    asa_fil_file_id: number;
    asa_position: number;
    asa_create_time: GeneratedTimestamp;
  };
};

export type MessageRole = 'user' | 'assistant';
/** A member's message: pending → answered | failed. The assistant's reply: complete. */
export type MessageStatus = 'pending' | 'answered' | 'failed' | 'complete';

export type AssistantDB = DB & AssistantTables;

export function assistantTables(db: Kysely<DB>): Kysely<AssistantDB> {
  return db.withTables<AssistantTables>() as unknown as Kysely<AssistantDB>;
}
