import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { findNode, NodeInputError } from './nodes.js';
import { nodeDb, type JobStatus } from './tables.js';

/** A job kind: a short identifier. Which kinds an agent runs is the agent's own allowlist. */
export const JOB_KIND_RE = /^[a-z][a-z0-9_]{0,39}$/;
/** The outcomes an agent may report. */
export const RESULT_STATUSES = ['completed', 'failed', 'refused'] as const;
export type ResultStatus = (typeof RESULT_STATUSES)[number];
/** A payload or result larger than this (as JSON) is refused. */
export const MAX_JOB_JSON_BYTES = 64 * 1024;

export interface QueuedJob {
  job_id: number;
  node_id: number | null;
  kind: string;
  payload: Record<string, unknown>;
  status: JobStatus;
}

export interface ClaimedJob {
  job_id: number;
  kind: string;
  payload: Record<string, unknown>;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Queues a job for one managed node, or for whichever approved node claims first (`nodeId` null). The
 * way management code and the operator CLI hand work to nodes.
 */
export async function queueNodeJob(db: Kysely<DB>, input: { nodeId: number | null; kind: string; payload?: Record<string, unknown>; now: Date }): Promise<QueuedJob> {
  if (!JOB_KIND_RE.test(input.kind)) throw new NodeInputError(`job kind must match ${JOB_KIND_RE.source}`);
  const payload = input.payload ?? {};
  if (!isPlainObject(payload)) throw new NodeInputError('the payload must be a JSON object');
  if (Buffer.byteLength(JSON.stringify(payload)) > MAX_JOB_JSON_BYTES) throw new NodeInputError(`the payload must be at most ${MAX_JOB_JSON_BYTES} bytes of JSON`);
  if (input.nodeId !== null) {
    const node = await findNode(db, input.nodeId);
    if (!node) throw new NodeInputError(`no managed node ${input.nodeId}`);
    if (node.status === 'revoked' || node.status === 'left') throw new NodeInputError(`node ${input.nodeId} is ${node.status}`);
  }
  const row = await nodeDb(db)
    .insertInto('smj_node_jobs')
    .values({ smj_smn_managed_node_id: input.nodeId, smj_kind: input.kind, smj_payload: JSON.stringify(payload), smj_create_time: input.now, smj_update_time: input.now })
    .returning(['smj_node_job_id', 'smj_smn_managed_node_id', 'smj_kind', 'smj_payload', 'smj_status'])
    .executeTakeFirstOrThrow();
  return {
    job_id: Number(row.smj_node_job_id),
    node_id: row.smj_smn_managed_node_id === null ? null : Number(row.smj_smn_managed_node_id),
    kind: row.smj_kind,
    payload: row.smj_payload,
    status: row.smj_status,
  };
}

/**
 * Takes the oldest pending job meant for this node (or for any node) and marks it claimed by the node, in
 * one transaction. The row is locked FOR UPDATE SKIP LOCKED, so concurrent claims each take a different
 * job (or none) and never wait on one another.
 */
export async function claimNodeJob(db: Kysely<DB>, nodeId: number, now: Date): Promise<ClaimedJob | null> {
  return nodeDb(db)
    .transaction()
    .execute(async (trx) => {
      const job = await trx
        .selectFrom('smj_node_jobs')
        .select(['smj_node_job_id', 'smj_kind', 'smj_payload'])
        .where('smj_status', '=', 'pending')
        .where((eb) => eb.or([eb('smj_smn_managed_node_id', '=', nodeId), eb('smj_smn_managed_node_id', 'is', null)]))
        .orderBy('smj_node_job_id')
        .limit(1)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!job) return null;
      const taken = await trx
        .updateTable('smj_node_jobs')
        .set({ smj_status: 'claimed', smj_claimed_by_smn_managed_node_id: nodeId, smj_claimed_time: now, smj_update_time: now })
        .where('smj_node_job_id', '=', job.smj_node_job_id)
        .where('smj_status', '=', 'pending')
        .executeTakeFirst();
      if (Number(taken.numUpdatedRows) !== 1) return null;
      return { job_id: Number(job.smj_node_job_id), kind: job.smj_kind, payload: job.smj_payload };
    });
}

export type ResultOutcome = { ok: true } | { ok: false; reason: 'unknown_job' | 'not_claimed' };

/** Records the outcome of a job this node claimed; only once, and only by the node holding it. */
export async function recordJobResult(
  db: Kysely<DB>,
  input: { nodeId: number; jobId: number; status: ResultStatus; output: Record<string, unknown>; now: Date },
): Promise<ResultOutcome> {
  const ndb = nodeDb(db);
  const updated = await ndb
    .updateTable('smj_node_jobs')
    .set({ smj_status: input.status, smj_result: JSON.stringify(input.output), smj_finished_time: input.now, smj_update_time: input.now })
    .where('smj_node_job_id', '=', input.jobId)
    .where('smj_claimed_by_smn_managed_node_id', '=', input.nodeId)
    .where('smj_status', '=', 'claimed')
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 1) return { ok: true };
  const job = await ndb
    .selectFrom('smj_node_jobs')
    .select('smj_node_job_id')
    .where('smj_node_job_id', '=', input.jobId)
    .where('smj_claimed_by_smn_managed_node_id', '=', input.nodeId)
    .executeTakeFirst();
  return { ok: false, reason: job ? 'not_claimed' : 'unknown_job' };
}

/** One job as stored, for the CLI and tests. */
export async function findNodeJob(db: Kysely<DB>, jobId: number) {
  return nodeDb(db).selectFrom('smj_node_jobs').selectAll().where('smj_node_job_id', '=', jobId).executeTakeFirst();
}
