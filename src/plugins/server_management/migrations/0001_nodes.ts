import type { Kysely } from 'kysely';
import { runStatements } from '../../../db/migrations/run-statements.js';

// Managed nodes (DESIGN 12): only the agent's public key is stored (base64 of the raw 32-byte Ed25519
// key, unique, so joining again with the same key finds the same node). Jobs are queued for one node, or
// for any approved node (null node); a claim takes the oldest pending one with FOR UPDATE SKIP LOCKED.
// Nonces seen within the skew window are kept per node, so a replayed request is refused.
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `create table smn_managed_nodes (
      smn_managed_node_id bigserial primary key,
      smn_claimed_name varchar(100) not null,
      smn_public_key varchar(44) not null unique,
      smn_fingerprint varchar(64) not null,
      smn_agent_version varchar(40) not null,
      smn_status varchar(16) not null default 'pending' check (smn_status in ('pending', 'approved', 'revoked', 'left')),
      smn_approved_time timestamp(6),
      smn_last_contact_time timestamp(6),
      smn_last_ip varchar(64),
      smn_create_time timestamp(6) not null default now(),
      smn_update_time timestamp(6) not null default now()
    )`,
    `create table smj_node_jobs (
      smj_node_job_id bigserial primary key,
      smj_smn_managed_node_id int8 references smn_managed_nodes(smn_managed_node_id),
      smj_kind varchar(40) not null,
      smj_payload jsonb not null default '{}'::jsonb,
      smj_status varchar(16) not null default 'pending' check (smj_status in ('pending', 'claimed', 'completed', 'failed', 'refused')),
      smj_claimed_by_smn_managed_node_id int8 references smn_managed_nodes(smn_managed_node_id),
      smj_claimed_time timestamp(6),
      smj_finished_time timestamp(6),
      smj_result jsonb,
      smj_create_time timestamp(6) not null default now(),
      smj_update_time timestamp(6) not null default now()
    )`,
    `create index smj_node_jobs_pending on smj_node_jobs (smj_smn_managed_node_id, smj_node_job_id) where smj_status = 'pending'`,
    `create index smj_node_jobs_claimed_by on smj_node_jobs (smj_claimed_by_smn_managed_node_id, smj_status)`,
    `create table smo_node_nonces (
      smo_smn_managed_node_id int8 not null references smn_managed_nodes(smn_managed_node_id) on delete cascade,
      smo_nonce varchar(64) not null,
      smo_expires_time timestamp(6) not null,
      primary key (smo_smn_managed_node_id, smo_nonce)
    )`,
    `create index smo_node_nonces_expires on smo_node_nonces (smo_expires_time)`,
  ]);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}
