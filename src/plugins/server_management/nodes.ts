import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import { nodeDb, type NodeStatus } from './tables.js';

export interface ManagedNode {
  id: number;
  claimedName: string;
  publicKey: string;
  fingerprint: string;
  agentVersion: string;
  status: NodeStatus;
  approvedTime: Date | null;
  lastContactTime: Date | null;
  createTime: Date;
}

export class NodeInputError extends Error {}

const COLUMNS = [
  'smn_managed_node_id',
  'smn_claimed_name',
  'smn_public_key',
  'smn_fingerprint',
  'smn_agent_version',
  'smn_status',
  'smn_approved_time',
  'smn_last_contact_time',
  'smn_create_time',
] as const;

type Row = {
  smn_managed_node_id: number;
  smn_claimed_name: string;
  smn_public_key: string;
  smn_fingerprint: string;
  smn_agent_version: string;
  smn_status: NodeStatus;
  smn_approved_time: Date | null;
  smn_last_contact_time: Date | null;
  smn_create_time: Date;
};

function toNode(r: Row): ManagedNode {
  return {
    id: Number(r.smn_managed_node_id),
    claimedName: r.smn_claimed_name,
    publicKey: r.smn_public_key,
    fingerprint: r.smn_fingerprint,
    agentVersion: r.smn_agent_version,
    status: r.smn_status,
    approvedTime: r.smn_approved_time,
    lastContactTime: r.smn_last_contact_time,
    createTime: r.smn_create_time,
  };
}

export async function findNode(db: Kysely<DB>, id: number): Promise<ManagedNode | null> {
  const row = await nodeDb(db).selectFrom('smn_managed_nodes').select(COLUMNS).where('smn_managed_node_id', '=', id).executeTakeFirst();
  return row ? toNode(row) : null;
}

export interface JoinInput {
  claimedName: string;
  /** The canonical base64 of the raw key (see canonicalPublicKey): one spelling per key. */
  publicKey: string;
  fingerprint: string;
  agentVersion: string;
  ip: string;
  now: Date;
}

/**
 * A node for this public key, in the caller's transaction: a new one is pending; the same key (known by
 * its fingerprint, whatever spelling an older row kept) joining again gets the same node, with its name
 * and version refreshed. A node that left joins again as pending. A revoked key never joins again:
 * 'revoked' (the agent must make a new key).
 */
export async function joinNode(db: Kysely<DB>, input: JoinInput): Promise<ManagedNode | 'revoked'> {
  const ndb = nodeDb(db);
  const known = await ndb.selectFrom('smn_managed_nodes').select(COLUMNS).where('smn_fingerprint', '=', input.fingerprint).orderBy('smn_managed_node_id').forUpdate().execute();
  if (known.some((r) => r.smn_status === 'revoked')) return 'revoked';
  const refresh = {
    smn_claimed_name: input.claimedName,
    smn_agent_version: input.agentVersion,
    smn_status: sql<NodeStatus>`case when smn_managed_nodes.smn_status = 'left' then 'pending' else smn_managed_nodes.smn_status end`,
    smn_last_contact_time: input.now,
    smn_last_ip: input.ip,
    smn_update_time: input.now,
  };
  if (known.length > 0) {
    const row = await ndb.updateTable('smn_managed_nodes').set(refresh).where('smn_managed_node_id', '=', known[0]!.smn_managed_node_id).returning(COLUMNS).executeTakeFirstOrThrow();
    return toNode(row);
  }
  const row = await ndb
    .insertInto('smn_managed_nodes')
    .values({
      smn_claimed_name: input.claimedName,
      smn_public_key: input.publicKey,
      smn_fingerprint: input.fingerprint,
      smn_agent_version: input.agentVersion,
      smn_status: 'pending',
      smn_last_contact_time: input.now,
      smn_last_ip: input.ip,
      smn_create_time: input.now,
      smn_update_time: input.now,
    })
    // Two first joins of one key at once: the second finds the first's row.
    .onConflict((oc) => oc.column('smn_public_key').doUpdateSet(refresh))
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
  return toNode(row);
}

/** Records a verified request's time and address. */
export async function touchNode(db: Kysely<DB>, id: number, ip: string, now: Date): Promise<void> {
  await nodeDb(db).updateTable('smn_managed_nodes').set({ smn_last_contact_time: now, smn_last_ip: ip }).where('smn_managed_node_id', '=', id).execute();
}

const TRANSITIONS: Record<'approve' | 'revoke' | 'leave', { to: NodeStatus; from: NodeStatus[] }> = {
  approve: { to: 'approved', from: ['pending', 'approved'] },
  revoke: { to: 'revoked', from: ['pending', 'approved', 'revoked', 'left'] },
  leave: { to: 'left', from: ['approved'] },
};

/**
 * Moves a node to approved, revoked or left. Approving a revoked node is refused (its key is distrusted;
 * the agent must make a new key and join again), as is approving a node that left.
 */
export async function setNodeStatus(db: Kysely<DB>, id: number, change: keyof typeof TRANSITIONS, now: Date): Promise<ManagedNode> {
  const { to, from } = TRANSITIONS[change];
  const row = await nodeDb(db)
    .updateTable('smn_managed_nodes')
    .set({ smn_status: to, smn_update_time: now, ...(change === 'approve' ? { smn_approved_time: now } : {}) })
    .where('smn_managed_node_id', '=', id)
    .where('smn_status', 'in', from)
    .returning(COLUMNS)
    .executeTakeFirst();
  if (row) return toNode(row);
  const node = await findNode(db, id);
  if (!node) throw new NodeInputError(`no managed node ${id}`);
  throw new NodeInputError(`node ${id} is ${node.status}; it cannot be ${change === 'approve' ? 'approved' : change === 'revoke' ? 'revoked' : 'left'}`);
}

export interface NodeSummary {
  node_id: number;
  claimed_name: string;
  fingerprint: string;
  agent_version: string;
  status: NodeStatus;
  approved_time: Date | null;
  last_contact_time: Date | null;
  create_time: Date;
  jobs: { pending: number; claimed: number; completed: number; failed: number; refused: number };
}

/** Every node, oldest first, with its job counts by status (jobs it was given or took). */
export async function listNodes(db: Kysely<DB>): Promise<NodeSummary[]> {
  const ndb = nodeDb(db);
  const [nodes, counts] = await Promise.all([
    ndb.selectFrom('smn_managed_nodes').select(COLUMNS).orderBy('smn_managed_node_id').execute(),
    ndb
      .selectFrom('smj_node_jobs')
      .select((eb) => [
        eb.fn.coalesce('smj_claimed_by_smn_managed_node_id', 'smj_smn_managed_node_id').as('node_id'),
        'smj_status',
        eb.fn.countAll<number>().as('n'),
      ])
      .groupBy([sql`1`, 'smj_status'])
      .execute(),
  ]);
  const byNode = new Map<number, NodeSummary['jobs']>();
  for (const c of counts) {
    if (c.node_id === null) continue;
    const id = Number(c.node_id);
    const jobs = byNode.get(id) ?? { pending: 0, claimed: 0, completed: 0, failed: 0, refused: 0 };
    jobs[c.smj_status] += Number(c.n);
    byNode.set(id, jobs);
  }
  return nodes.map((r) => {
    const n = toNode(r);
    return {
      node_id: n.id,
      claimed_name: n.claimedName,
      fingerprint: n.fingerprint,
      agent_version: n.agentVersion,
      status: n.status,
      approved_time: n.approvedTime,
      last_contact_time: n.lastContactTime,
      create_time: n.createTime,
      jobs: byNode.get(n.id) ?? { pending: 0, claimed: 0, completed: 0, failed: 0, refused: 0 },
    };
  });
}

/**
 * Records a nonce for the node until `expires`; false when the node already used it within the window
 * (a replay). Expired nonces of the node are cleared first.
 */
export async function useNonce(db: Kysely<DB>, nodeId: number, nonce: string, now: Date, expires: Date): Promise<boolean> {
  const ndb = nodeDb(db);
  await ndb.deleteFrom('smo_node_nonces').where('smo_smn_managed_node_id', '=', nodeId).where('smo_expires_time', '<', now).execute();
  const inserted = await ndb
    .insertInto('smo_node_nonces')
    .values({ smo_smn_managed_node_id: nodeId, smo_nonce: nonce, smo_expires_time: expires })
    .onConflict((oc) => oc.columns(['smo_smn_managed_node_id', 'smo_nonce']).doNothing())
    .returning('smo_nonce')
    .executeTakeFirst();
  return inserted !== undefined;
}
