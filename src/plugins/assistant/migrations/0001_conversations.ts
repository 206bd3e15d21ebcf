import type { Kysely } from 'kysely';
import { runStatements } from '../../../db/migrations/run-statements.js';

// The assistant plugin's tables (stored as plugin_assistant_0001_conversations).
// - asc_assistant_conversations: one member's conversation with the assistant.
// - asm_assistant_messages: its turns in order. A member's message is 'pending' while the provider is
//   asked, then 'answered' or 'failed' (no reply, with the reason); the assistant's reply is 'complete'.
// - asa_assistant_attachments: the files a member's message carried, in the order sent. Each file is a
//   fil_files row (fil_source 'assistant_attachment', owned by the member) whose bytes are a blob.
const T = 'timestamp(6)';

export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table asc_assistant_conversations (
      asc_assistant_conversation_id bigserial primary key,
      asc_usr_user_id int8 not null references usr_users(usr_user_id),
      asc_title varchar(100) not null,
      asc_create_time ${T} not null default now(),
      asc_update_time ${T} not null default now(),
      asc_delete_time ${T}
    )`,
    `create index asc_assistant_conversations_owner on asc_assistant_conversations (asc_usr_user_id, asc_update_time)
      where asc_delete_time is null`,
    `create table asm_assistant_messages (
      asm_assistant_message_id bigserial primary key,
      asm_asc_assistant_conversation_id int8 not null references asc_assistant_conversations(asc_assistant_conversation_id),
      asm_role varchar(16) not null check (asm_role in ('user', 'assistant')),
      asm_body text not null,
      asm_status varchar(16) not null check (asm_status in ('pending', 'answered', 'failed', 'complete')),
      asm_failure varchar(32),
      asm_model varchar(200),
      asm_create_time ${T} not null default now(),
      asm_update_time ${T} not null default now()
    )`,
    `create index asm_assistant_messages_conversation on asm_assistant_messages (asm_asc_assistant_conversation_id, asm_assistant_message_id)`,
    `create table asa_assistant_attachments (
      asa_assistant_attachment_id bigserial primary key,
      asa_asm_assistant_message_id int8 not null references asm_assistant_messages(asm_assistant_message_id),
      asa_fil_file_id int8 not null references fil_files(fil_file_id),
      asa_position int4 not null,
      asa_create_time ${T} not null default now(),
      unique (asa_asm_assistant_message_id, asa_position)
    )`,
  ]);
}

export async function down(db: Kysely<any>): Promise<void> {
  await runStatements(db, ['drop table asa_assistant_attachments', 'drop table asm_assistant_messages', 'drop table asc_assistant_conversations']);
}
