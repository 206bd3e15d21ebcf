// Types of the reference agent (agent.mjs), for the tests that use it as a client.
import type { KeyObject } from 'node:crypto';

export interface AgentIdentity {
  file: string;
  privateKey: KeyObject;
  /** Base64 of the raw 32-byte Ed25519 public key. */
  publicKey: string;
  fingerprint: string;
  nodeId: number | null;
}
export interface AgentResponse {
  status: number;
  json: any;
}
export interface RequestOptions {
  signed?: boolean;
  nowMs?: number;
  nonce?: string;
  /** Sent as the body instead of JSON of the payload. */
  rawBody?: string;
  /** Signed instead of the body actually sent (a tampering test). */
  signBody?: Buffer;
}
export interface JobResult {
  job_id: number;
  status: 'completed' | 'failed' | 'refused';
  output: Record<string, unknown>;
}
export interface Job {
  job_id: number;
  kind: string;
  payload: Record<string, unknown>;
}

export const AGENT_VERSION: string;
export const MESSAGE_TAG: string;
export const JOIN_NODE_ID: number;
export const AGENT_PATH: string;
export class AgentError extends Error {
  response: AgentResponse;
}
export function fingerprintOf(rawPublicKey: Buffer): string;
export function loadOrCreateIdentity(file: string): AgentIdentity;
export function saveNodeId(identity: AgentIdentity, nodeId: number): void;
export function canonicalMessage(p: { method: string; path: string; nodeId: number | string; timestamp: number | string; nonce: string; body: Buffer }): string;
export function signedHeaders(identity: AgentIdentity, endpoint: string, body: Buffer, opts?: RequestOptions): Record<string, string>;
export function agentRequest(server: string, identity: AgentIdentity, endpoint: string, payload?: unknown, opts?: RequestOptions): Promise<AgentResponse>;
export function join(server: string, identity: AgentIdentity, opts?: { name?: string } & RequestOptions): Promise<{ node_id: number; status: string; fingerprint: string }>;
export function joinStatus(server: string, identity: AgentIdentity, opts?: RequestOptions): Promise<{ node_id: number; status: string; fingerprint: string }>;
export function claim(server: string, identity: AgentIdentity, opts?: RequestOptions): Promise<Job | null>;
export function postResult(server: string, identity: AgentIdentity, result: JobResult, opts?: RequestOptions): Promise<{ job_id: number; status: string }>;
export function leave(server: string, identity: AgentIdentity, opts?: RequestOptions): Promise<{ node_id: number; status: string }>;
export const JOB_HANDLERS: Record<string, (payload: Record<string, unknown>) => Promise<Record<string, unknown>>>;
export function runJob(job: Job): Promise<JobResult>;
export function pollOnce(server: string, identity: AgentIdentity): Promise<JobResult | null>;
export function backoffMs(idle: number, minMs?: number, maxMs?: number): number;
export function pollLoop(
  server: string,
  identity: AgentIdentity,
  opts?: { sleep?: (ms: number) => Promise<void>; log?: (entry: Record<string, unknown>) => void; stopped?: () => boolean; maxPolls?: number; minDelayMs?: number; maxDelayMs?: number },
): Promise<void>;
