import type { ColumnType, Generated, Kysely } from 'kysely';
import type { DB, Timestamp } from '../../db/types.js';

type Nullable<T> = T | null;
type Opt<T> = ColumnType<T | null, T | null | undefined, T | null>;

/** A hosted relay fleet slot: one per customer (DESIGN 11). */
export interface MailboxFleetSlotsTable {
  mfs_mailbox_fleet_slot_id: Generated<number>;
  mfs_usr_user_id: number;
  /** 'active'; 'grace' once a re-check found the tier without mailbox_fleet_slot; 'suspended' after the grace window. */
  mfs_status: FleetSlotStatus;
  /** When the re-check first found the slot feature missing: the grace window runs from here. */
  mfs_grace_start_time: Opt<Date>;
  mfs_suspended_time: Opt<Date>;
  mfs_last_check_time: Opt<Date>;
  mfs_create_time: Timestamp;
  mfs_update_time: Timestamp;
  mfs_delete_time: Opt<Date>;
}

/** A domain routed through a customer's fleet slot; a domain belongs to at most one slot. */
export interface MailboxFleetDomainsTable {
  mfd_mailbox_fleet_domain_id: Generated<number>;
  mfd_mfs_mailbox_fleet_slot_id: number;
  mfd_domain: string;
  mfd_create_time: Timestamp;
}

/**
 * A relay run: a relay being born from a bundle. Only SHA-256 digests of the run token and of the bundle
 * are kept; the bundle's bytes are a blob of the blob store, referenced (fbb_refcount) by the run.
 */
export interface RelayRunsTable {
  rlr_relay_run_id: Generated<number>;
  rlr_token_hash: string;
  rlr_bundle_sha256: string;
  rlr_bundle_size_bytes: number;
  rlr_fbb_file_blob_id: number;
  rlr_expires_time: Timestamp;
  /** Set when a birth report was believed: the token is spent then. */
  rlr_born_time: Opt<Date>;
  rlr_public_ip: Opt<string>;
  rlr_identity_public_key: Opt<string>;
  rlr_identity_fingerprint: Opt<string>;
  rlr_relay_version: Opt<string>;
  rlr_create_time: Timestamp;
  rlr_update_time: Timestamp;
}

export type FleetSlotStatus = 'active' | 'grace' | 'suspended';

export type FleetRelayTables = {
  mfs_mailbox_fleet_slots: MailboxFleetSlotsTable;
  mfd_mailbox_fleet_domains: MailboxFleetDomainsTable;
  rlr_relay_runs: RelayRunsTable;
};

export type FleetRelayDB = DB & FleetRelayTables;

/** The core's database handle with this part of the plugin's tables (the core's DB type never names them). */
export function withFleetRelayTables(db: Kysely<DB>): Kysely<FleetRelayDB> {
  return db.withTables<FleetRelayTables>();
}

export type { Nullable };
