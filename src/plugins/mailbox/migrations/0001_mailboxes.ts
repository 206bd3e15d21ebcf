import type { Kysely } from 'kysely';
import { runStatements } from '../../../db/migrations/run-statements.js';

// The mailbox plugin's tables (DESIGN 11). Sender, recipients, subject, body and the header hops of a
// message are stored sealed (AES-256-GCM under the message's content key, which is sealed to the owner's
// vault public key in mbm_sealed_key) when its mailbox is above `standard`; mbm_sealed_key null means the
// columns hold cleartext. Everything else (threading, unread, stars, labels, folders, times, sizes) is
// metadata and stays readable while the vault is locked.
async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table mbx_mailboxes (
      mbx_mailbox_id bigserial primary key,
      mbx_usr_user_id int8 not null references usr_users(usr_user_id),
      mbx_address varchar(255) not null,
      mbx_security_level varchar(16) not null default 'standard' check (mbx_security_level in ('standard', 'private', 'fortress')),
      mbx_is_default bool not null default false,
      mbx_create_time timestamp(6) not null default now(),
      mbx_update_time timestamp(6) not null default now(),
      mbx_delete_time timestamp(6)
    )`,
    `create unique index mbx_mailboxes_live_address on mbx_mailboxes (lower(mbx_address)) where mbx_delete_time is null`,
    `create unique index mbx_mailboxes_one_default on mbx_mailboxes (mbx_usr_user_id) where mbx_is_default and mbx_delete_time is null`,
    `create index mbx_mailboxes_owner on mbx_mailboxes (mbx_usr_user_id)`,
    `create table mbf_mailbox_folders (
      mbf_mailbox_folder_id bigserial primary key,
      mbf_mbx_mailbox_id int8 not null references mbx_mailboxes(mbx_mailbox_id),
      mbf_name varchar(64) not null,
      mbf_role varchar(16) check (mbf_role in ('inbox', 'sent', 'archive', 'trash')),
      mbf_create_time timestamp(6) not null default now(),
      mbf_delete_time timestamp(6)
    )`,
    `create unique index mbf_mailbox_folders_live_name on mbf_mailbox_folders (mbf_mbx_mailbox_id, lower(mbf_name)) where mbf_delete_time is null`,
    `create table mbl_mailbox_labels (
      mbl_mailbox_label_id bigserial primary key,
      mbl_mbx_mailbox_id int8 not null references mbx_mailboxes(mbx_mailbox_id),
      mbl_name varchar(64) not null,
      mbl_create_time timestamp(6) not null default now()
    )`,
    `create unique index mbl_mailbox_labels_name on mbl_mailbox_labels (mbl_mbx_mailbox_id, lower(mbl_name))`,
    `create table mbt_mailbox_threads (
      mbt_mailbox_thread_id bigserial primary key,
      mbt_mbx_mailbox_id int8 not null references mbx_mailboxes(mbx_mailbox_id),
      mbt_mbf_mailbox_folder_id int8 references mbf_mailbox_folders(mbf_mailbox_folder_id),
      mbt_is_starred bool not null default false,
      mbt_last_message_time timestamp(6) not null,
      mbt_create_time timestamp(6) not null default now(),
      mbt_update_time timestamp(6) not null default now(),
      mbt_delete_time timestamp(6)
    )`,
    `create index mbt_mailbox_threads_list on mbt_mailbox_threads (mbt_mbx_mailbox_id, mbt_last_message_time desc) where mbt_delete_time is null`,
    `create table mtl_mailbox_thread_labels (
      mtl_mbt_mailbox_thread_id int8 not null references mbt_mailbox_threads(mbt_mailbox_thread_id),
      mtl_mbl_mailbox_label_id int8 not null references mbl_mailbox_labels(mbl_mailbox_label_id),
      primary key (mtl_mbt_mailbox_thread_id, mtl_mbl_mailbox_label_id)
    )`,
    `create table mbm_mailbox_messages (
      mbm_mailbox_message_id bigserial primary key,
      mbm_mbt_mailbox_thread_id int8 not null references mbt_mailbox_threads(mbt_mailbox_thread_id),
      mbm_mbx_mailbox_id int8 not null references mbx_mailboxes(mbx_mailbox_id),
      mbm_direction varchar(8) not null check (mbm_direction in ('inbound', 'outbound')),
      mbm_message_id_header varchar(998),
      mbm_in_reply_to varchar(998),
      mbm_sender text,
      mbm_recipients text,
      mbm_subject text,
      mbm_body text,
      mbm_hops text,
      mbm_sealed_key text,
      mbm_size_bytes int8 not null default 0,
      mbm_attachment_count int not null default 0,
      mbm_is_read bool not null default false,
      mbm_message_time timestamp(6) not null,
      mbm_create_time timestamp(6) not null default now(),
      mbm_delete_time timestamp(6)
    )`,
    `create unique index mbm_mailbox_messages_message_id on mbm_mailbox_messages (mbm_mbx_mailbox_id, mbm_message_id_header) where mbm_message_id_header is not null`,
    `create index mbm_mailbox_messages_thread on mbm_mailbox_messages (mbm_mbt_mailbox_thread_id, mbm_message_time)`,
    `create index mbm_mailbox_messages_unsealed on mbm_mailbox_messages (mbm_mbx_mailbox_id) where mbm_sealed_key is null`,
    `create table mde_mailbox_delivery_events (
      mde_mailbox_delivery_event_id bigserial primary key,
      mde_mbm_mailbox_message_id int8 not null references mbm_mailbox_messages(mbm_mailbox_message_id),
      mde_kind varchar(16) not null check (mde_kind in ('received', 'queued', 'relayed', 'delivered', 'deferred', 'bounced', 'opened')),
      mde_time timestamp(6),
      mde_title varchar(255) not null,
      mde_detail text,
      mde_meta jsonb not null default '{}'::jsonb,
      mde_create_time timestamp(6) not null default now()
    )`,
    `create index mde_mailbox_delivery_events_message on mde_mailbox_delivery_events (mde_mbm_mailbox_message_id)`,
  ]);
}

async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
export default { up, down };
