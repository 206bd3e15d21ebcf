import type { Generated, Kysely } from 'kysely';
import type { DB, GeneratedTimestamp, Json, Timestamp } from '../../db/types.js';

// The mailbox plugin's tables as Kysely sees them (migration 0001_mailboxes). They are not in the core's
// DB type: the plugin's code reaches them through `mailboxDb(db)`.

type Nullable<T> = T | null;

export type SecurityLevel = 'standard' | 'private' | 'fortress';
export const SECURITY_LEVELS: readonly SecurityLevel[] = ['standard', 'private', 'fortress'];
export const DELIVERY_EVENT_KINDS = ['received', 'queued', 'relayed', 'delivered', 'deferred', 'bounced', 'opened'] as const;
export type DeliveryEventKind = (typeof DELIVERY_EVENT_KINDS)[number];
export type FolderRole = 'inbox' | 'sent' | 'archive' | 'trash';

export interface MailboxesTable {
  mbx_mailbox_id: Generated<number>;
  mbx_usr_user_id: number;
  mbx_address: string;
  mbx_security_level: Generated<SecurityLevel>;
  mbx_is_default: Generated<boolean>;
  mbx_create_time: GeneratedTimestamp;
  mbx_update_time: GeneratedTimestamp;
  mbx_delete_time: Nullable<Timestamp> | undefined;
}

export interface FoldersTable {
  mbf_mailbox_folder_id: Generated<number>;
  mbf_mbx_mailbox_id: number;
  mbf_name: string;
  mbf_role: Nullable<FolderRole>;
  mbf_create_time: GeneratedTimestamp;
  mbf_delete_time: Nullable<Timestamp> | undefined;
}

export interface LabelsTable {
  mbl_mailbox_label_id: Generated<number>;
  mbl_mbx_mailbox_id: number;
  mbl_name: string;
  mbl_create_time: GeneratedTimestamp;
}

export interface ThreadsTable {
  mbt_mailbox_thread_id: Generated<number>;
  mbt_mbx_mailbox_id: number;
  mbt_mbf_mailbox_folder_id: Nullable<number>;
  mbt_is_starred: Generated<boolean>;
  mbt_last_message_time: Timestamp;
  mbt_create_time: GeneratedTimestamp;
  mbt_update_time: GeneratedTimestamp;
  mbt_delete_time: Nullable<Timestamp> | undefined;
}

export interface ThreadLabelsTable {
  mtl_mbt_mailbox_thread_id: number;
  mtl_mbl_mailbox_label_id: number;
}

export interface MessagesTable {
  mbm_mailbox_message_id: Generated<number>;
  mbm_mbt_mailbox_thread_id: number;
  mbm_mbx_mailbox_id: number;
  mbm_direction: 'inbound' | 'outbound';
  mbm_message_id_header: Nullable<string>;
  mbm_in_reply_to: Nullable<string>;
  mbm_sender: Nullable<string>;
  mbm_recipients: Nullable<string>;
  mbm_subject: Nullable<string>;
  mbm_body: Nullable<string>;
  mbm_hops: Nullable<string>;
  mbm_sealed_key: Nullable<string>;
  mbm_size_bytes: Generated<number>;
  mbm_attachment_count: Generated<number>;
  mbm_is_read: Generated<boolean>;
  mbm_message_time: Timestamp;
  mbm_create_time: GeneratedTimestamp;
  mbm_delete_time: Nullable<Timestamp> | undefined;
}

export interface DeliveryEventsTable {
  mde_mailbox_delivery_event_id: Generated<number>;
  mde_mbm_mailbox_message_id: number;
  mde_kind: DeliveryEventKind;
  mde_time: Nullable<Timestamp>;
  mde_title: string;
  mde_detail: Nullable<string>;
  mde_meta: Json<Record<string, unknown>>;
  mde_create_time: GeneratedTimestamp;
}

export interface MailboxTables {
  mbx_mailboxes: MailboxesTable;
  mbf_mailbox_folders: FoldersTable;
  mbl_mailbox_labels: LabelsTable;
  mbt_mailbox_threads: ThreadsTable;
  mtl_mailbox_thread_labels: ThreadLabelsTable;
  mbm_mailbox_messages: MessagesTable;
  mde_mailbox_delivery_events: DeliveryEventsTable;
}

export type MailboxDB = DB & MailboxTables;

/** The same connection or transaction, typed with the plugin's tables. */
export function mailboxDb(db: Kysely<DB>): Kysely<MailboxDB> {
  return db as unknown as Kysely<MailboxDB>;
}
