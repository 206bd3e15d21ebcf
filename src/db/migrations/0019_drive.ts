import type { Kysely } from 'kysely';
import { runStatements } from './run-statements.js';

// Drive (DESIGN 9). A Drive file is a fil_files row with fil_source 'drive' (other upload purposes write
// their own source); its bytes are a content-addressed blob (fbb_) shared by every file and version that
// holds the same content, counted by fbb_refcount in the same transaction as the rows that reference it.
// - fol_folders: an owner's folder tree; sibling names are unique among live, untrashed rows (a partial
//   unique index; the root is parent 0 in the index).
// - fvr_file_versions: one row pins one earlier blob of a file.
// - fga_file_access_grants: a grantee's role on one file or one folder (and so on everything under it).
// - fsl_file_share_links: public links; only the SHA-256 of the token is stored, the password as argon2id.
// - fch_file_changes: the change feed; its bigserial id is the sync cursor. No foreign keys: entries
//   outlive the rows they name.
// - fup_file_uploads: pending chunked uploads. The chunk lease (fup_lease_token/_until) serialises
//   appends without holding a transaction open while bytes stream in; the chunk that completes the
//   bytes records the server's own SHA-256 of them (fup_received_sha256), so completion need not re-read.
const T = 'timestamp(6)';
const times = (p: string) =>
  `${p}_create_time ${T} not null default now(),
      ${p}_update_time ${T} not null default now(),
      ${p}_delete_time ${T}`;

export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table fbb_file_blobs (
      fbb_file_blob_id bigserial primary key,
      fbb_sha256 char(64) not null check (fbb_sha256 ~ '^[0-9a-f]{64}$'),
      fbb_size_bytes int8 not null check (fbb_size_bytes >= 0),
      fbb_mime_type varchar(255),
      fbb_driver varchar(16) not null,
      fbb_storage_key varchar(1024) not null,
      fbb_refcount int4 not null default 0 check (fbb_refcount >= 0),
      fbb_create_time ${T} not null default now(),
      fbb_update_time ${T} not null default now(),
      unique (fbb_driver, fbb_sha256, fbb_size_bytes)
    )`,
    `create index fbb_file_blobs_unreferenced on fbb_file_blobs (fbb_update_time) where fbb_refcount = 0`,
    `create table fol_folders (
      fol_folder_id bigserial primary key,
      fol_usr_user_id int8 not null references usr_users(usr_user_id),
      fol_fol_folder_id_parent int8 references fol_folders(fol_folder_id),
      fol_name varchar(255) not null check (length(fol_name) > 0),
      fol_is_trashed bool not null default false,
      fol_trash_time ${T},
      ${times('fol')}
    )`,
    `create unique index fol_folders_sibling_name on fol_folders
      (fol_usr_user_id, coalesce(fol_fol_folder_id_parent, 0), fol_name)
      where fol_delete_time is null and not fol_is_trashed`,
    `create index fol_folders_parent on fol_folders (fol_fol_folder_id_parent)`,
    `alter table fil_files add column fil_source varchar(32)`,
    `alter table fil_files add column fil_fol_folder_id int8 references fol_folders(fol_folder_id)`,
    `alter table fil_files add column fil_fbb_file_blob_id int8 references fbb_file_blobs(fbb_file_blob_id)`,
    `alter table fil_files add column fil_size_bytes int8 check (fil_size_bytes >= 0)`,
    `alter table fil_files add column fil_mime_type varchar(255)`,
    `alter table fil_files add column fil_is_trashed bool not null default false`,
    `alter table fil_files add column fil_trash_time ${T}`,
    `create index fil_files_drive_folder on fil_files (fil_usr_user_id, fil_fol_folder_id)
      where fil_source = 'drive' and fil_delete_time is null`,
    `create index fil_files_folder on fil_files (fil_fol_folder_id) where fil_fol_folder_id is not null`,
    `create index fil_files_blob on fil_files (fil_fbb_file_blob_id) where fil_fbb_file_blob_id is not null`,
    `create table fvr_file_versions (
      fvr_file_version_id bigserial primary key,
      fvr_fil_file_id int8 not null references fil_files(fil_file_id),
      fvr_fbb_file_blob_id int8 not null references fbb_file_blobs(fbb_file_blob_id),
      fvr_name varchar(255),
      fvr_size_bytes int8 not null check (fvr_size_bytes >= 0),
      fvr_mime_type varchar(255),
      fvr_content_time ${T} not null,
      fvr_create_time ${T} not null default now()
    )`,
    `create index fvr_file_versions_file on fvr_file_versions (fvr_fil_file_id, fvr_file_version_id)`,
    `create index fvr_file_versions_blob on fvr_file_versions (fvr_fbb_file_blob_id)`,
    `create table fga_file_access_grants (
      fga_file_access_grant_id bigserial primary key,
      fga_fil_file_id int8 references fil_files(fil_file_id),
      fga_fol_folder_id int8 references fol_folders(fol_folder_id),
      fga_usr_user_id int8 not null references usr_users(usr_user_id),
      fga_role varchar(16) not null check (fga_role in ('viewer', 'editor')),
      ${times('fga')},
      check ((fga_fil_file_id is null) <> (fga_fol_folder_id is null))
    )`,
    `create unique index fga_file_access_grants_file on fga_file_access_grants (fga_fil_file_id, fga_usr_user_id)
      where fga_fil_file_id is not null and fga_delete_time is null`,
    `create unique index fga_file_access_grants_folder on fga_file_access_grants (fga_fol_folder_id, fga_usr_user_id)
      where fga_fol_folder_id is not null and fga_delete_time is null`,
    `create index fga_file_access_grants_grantee on fga_file_access_grants (fga_usr_user_id) where fga_delete_time is null`,
    `create table fsl_file_share_links (
      fsl_file_share_link_id bigserial primary key,
      fsl_fil_file_id int8 not null references fil_files(fil_file_id),
      fsl_usr_user_id int8 not null references usr_users(usr_user_id),
      fsl_token_hash char(64) not null unique,
      fsl_password_hash varchar(255),
      fsl_expires_time ${T},
      fsl_revoked_time ${T},
      ${times('fsl')}
    )`,
    `create index fsl_file_share_links_file on fsl_file_share_links (fsl_fil_file_id)`,
    `create table fch_file_changes (
      fch_file_change_id bigserial primary key,
      fch_usr_user_id int8 not null,
      fch_kind varchar(32) not null,
      fch_fil_file_id int8,
      fch_fol_folder_id int8,
      fch_create_time ${T} not null default now()
    )`,
    `create index fch_file_changes_owner on fch_file_changes (fch_usr_user_id, fch_file_change_id)`,
    `create index fch_file_changes_time on fch_file_changes (fch_create_time)`,
    `create table fup_file_uploads (
      fup_file_upload_id bigserial primary key,
      fup_token_hash char(64) not null unique,
      fup_purpose varchar(64) not null,
      fup_usr_user_id int8 not null references usr_users(usr_user_id),
      fup_name varchar(255),
      fup_mime_type varchar(255),
      fup_fol_folder_id int8 references fol_folders(fol_folder_id),
      fup_fil_file_id int8 references fil_files(fil_file_id),
      fup_expected_bytes int8 not null check (fup_expected_bytes >= 0),
      fup_expected_sha256 char(64),
      fup_received_bytes int8 not null default 0 check (fup_received_bytes >= 0),
      fup_received_sha256 char(64),
      fup_part_name varchar(128) not null,
      fup_lease_token varchar(64),
      fup_lease_until ${T},
      fup_create_time ${T} not null default now(),
      fup_update_time ${T} not null default now(),
      check (fup_received_bytes <= fup_expected_bytes)
    )`,
    `create index fup_file_uploads_idle on fup_file_uploads (fup_update_time)`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
