import type { Kysely } from 'kysely';
import { runStatements } from '../../../db/migrations/run-statements.js';

const T = 'timestamp(6)';

/** The hosted relay fleet's slots and domains, and relay runs (DESIGN 11). Stored as plugin_mailbox_0002_fleet_relay. */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table mfs_mailbox_fleet_slots (
      mfs_mailbox_fleet_slot_id bigserial primary key,
      mfs_usr_user_id int8 not null references usr_users(usr_user_id),
      mfs_status varchar(16) not null default 'active' check (mfs_status in ('active', 'grace', 'suspended')),
      mfs_grace_start_time ${T},
      mfs_suspended_time ${T},
      mfs_last_check_time ${T},
      mfs_create_time ${T} not null default now(),
      mfs_update_time ${T} not null default now(),
      mfs_delete_time ${T}
    )`,
    `create unique index mfs_mailbox_fleet_slots_one_per_user on mfs_mailbox_fleet_slots (mfs_usr_user_id) where mfs_delete_time is null`,
    `create table mfd_mailbox_fleet_domains (
      mfd_mailbox_fleet_domain_id bigserial primary key,
      mfd_mfs_mailbox_fleet_slot_id int8 not null references mfs_mailbox_fleet_slots(mfs_mailbox_fleet_slot_id) on delete cascade,
      mfd_domain varchar(253) not null check (length(mfd_domain) > 0),
      mfd_create_time ${T} not null default now()
    )`,
    `create unique index mfd_mailbox_fleet_domains_domain on mfd_mailbox_fleet_domains (mfd_domain)`,
    `create index mfd_mailbox_fleet_domains_slot on mfd_mailbox_fleet_domains (mfd_mfs_mailbox_fleet_slot_id)`,
    `create table rlr_relay_runs (
      rlr_relay_run_id bigserial primary key,
      rlr_token_hash char(64) not null check (rlr_token_hash ~ '^[0-9a-f]{64}$'),
      rlr_bundle_sha256 char(64) not null check (rlr_bundle_sha256 ~ '^[0-9a-f]{64}$'),
      rlr_bundle_size_bytes int8 not null check (rlr_bundle_size_bytes >= 0),
      rlr_fbb_file_blob_id int8 not null references fbb_file_blobs(fbb_file_blob_id),
      rlr_expires_time ${T} not null,
      rlr_born_time ${T},
      rlr_public_ip varchar(45),
      rlr_identity_public_key varchar(200),
      rlr_identity_fingerprint varchar(44),
      rlr_relay_version varchar(64),
      rlr_create_time ${T} not null default now(),
      rlr_update_time ${T} not null default now()
    )`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
