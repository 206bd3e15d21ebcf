import type { ColumnType, Generated, Kysely } from 'kysely';
import type { DB, GeneratedTimestamp, Json, Timestamp } from '../../db/types.js';

export type NodeStatus = 'pending' | 'approved' | 'revoked' | 'left';
export type JobStatus = 'pending' | 'claimed' | 'completed' | 'failed' | 'refused';

export interface ManagedNodesTable {
  smn_managed_node_id: Generated<number>;
  smn_claimed_name: string;
  smn_public_key: string;
  smn_fingerprint: string;
  smn_agent_version: string;
  smn_status: ColumnType<NodeStatus, NodeStatus | undefined, NodeStatus>;
  smn_approved_time: Timestamp | null;
  smn_last_contact_time: Timestamp | null;
  smn_last_ip: string | null;
  smn_create_time: GeneratedTimestamp;
  smn_update_time: GeneratedTimestamp;
}

export interface NodeJobsTable {
  smj_node_job_id: Generated<number>;
  smj_smn_managed_node_id: number | null;
  smj_kind: string;
  smj_payload: Json<Record<string, unknown>>;
  smj_status: ColumnType<JobStatus, JobStatus | undefined, JobStatus>;
  smj_claimed_by_smn_managed_node_id: number | null;
  smj_claimed_time: Timestamp | null;
  smj_finished_time: Timestamp | null;
  smj_result: Json<Record<string, unknown>> | null;
  smj_create_time: GeneratedTimestamp;
  smj_update_time: GeneratedTimestamp;
}

export interface NodeNoncesTable {
  smo_smn_managed_node_id: number;
  smo_nonce: string;
  smo_expires_time: Timestamp;
}

export interface ServerManagementTables {
  smn_managed_nodes: ManagedNodesTable;
  smj_node_jobs: NodeJobsTable;
  smo_node_nonces: NodeNoncesTable;
}

export type NodeDb = Kysely<ServerManagementTables>;

/** The plugin's tables are not in the core's DB type: its queries see them through this view of the same connection. */
export function nodeDb(db: Kysely<DB>): NodeDb {
  return db as unknown as NodeDb;
}
