import type { Kysely } from 'kysely';
import { deferredWrite } from '../db/deferred-write.js';
import type { DB } from '../db/types.js';
import type { Principal } from '../accounts/auth/principal.js';
import type { Clock } from '../lib/clock.js';
import { sha256Hex } from '../lib/crypto.js';
import { validationError } from '../http/errors.js';

/** An executing claim older than this is taken to belong to a crashed request and may be taken over. */
export const EXECUTING_TIMEOUT_MS = 5 * 60_000;
export const MAX_KEY_LENGTH = 255;

/**
 * The credential a key is scoped to: an API key by its id, a browser session by its session. The anonymous
 * principal and sessionless calls have no scope, so their Idempotency-Key header is ignored.
 */
export function idempotencyScope(principal: Principal | null): string | null {
  if (!principal) return null;
  if (principal.apiKey) return `key:${principal.apiKey.apk_api_key_id}`;
  if (principal.credential === 'browser' && principal.user) {
    return principal.webSessionId !== undefined ? `browser:${principal.webSessionId}` : `user:${principal.user.usr_user_id}`;
  }
  return null;
}

/** Deeper bodies are refused (400) rather than fingerprinted: recursion that deep would overflow the stack. */
export const MAX_BODY_DEPTH = 100;

/** JSON with object keys sorted at every level, so equal bodies hash equally whatever their key order. */
export function canonicalJson(value: unknown, depth = 0): string {
  if (depth > MAX_BODY_DEPTH && value !== null && typeof value === 'object') {
    throw validationError({ body: `must not be nested more than ${MAX_BODY_DEPTH} levels deep` });
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, depth + 1)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v, depth + 1)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The request fingerprint: the action name and the canonical body. */
export function requestFingerprint(action: string, body: unknown): string {
  return sha256Hex(`${action}\n${canonicalJson(body)}`);
}

/**
 * What an Idempotency-Key keeps of a successful answer that holds a secret (the descriptor's
 * answer_holds_secret): this marker, never the answer. A retry finds it and is refused; nothing repeats.
 */
export const SECRET_ANSWER_MARKER = 'secret-answer:v1';

export const isSecretAnswerMarker = (stored: string): boolean => stored === SECRET_ANSWER_MARKER;

export interface StoredResponse {
  status: number;
  body: string;
}

/** The closed set of answers to "may this request run under this key?". */
export type ClaimOutcome =
  | { kind: 'unseen' }
  | { kind: 'claimed'; id: number }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'reused' }
  | { kind: 'executing' };

interface Row {
  aik_api_idempotency_key_id: number;
  aik_fingerprint: string;
  aik_state: 'executing' | 'stored';
  aik_status: number | null;
  aik_body: string | null;
  aik_update_time: Date;
}

export class IdempotencyStore {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
  ) {}

  static hashKey(key: string): string {
    return sha256Hex(key);
  }

  private find(scope: string, keyHash: string): Promise<Row | undefined> {
    return this.db
      .selectFrom('aik_api_idempotency_keys')
      .select(['aik_api_idempotency_key_id', 'aik_fingerprint', 'aik_state', 'aik_status', 'aik_body', 'aik_update_time'])
      .where('aik_scope', '=', scope)
      .where('aik_key_hash', '=', keyHash)
      .executeTakeFirst();
  }

  /** What an existing record says about a request with this fingerprint; a stale executing claim is taken over. */
  private async judge(row: Row, fingerprint: string): Promise<ClaimOutcome> {
    if (row.aik_fingerprint !== fingerprint) return { kind: 'reused' };
    if (row.aik_state === 'stored') return { kind: 'replay', response: { status: row.aik_status ?? 200, body: row.aik_body ?? '' } };
    const now = this.clock.now();
    const taken = await this.db
      .updateTable('aik_api_idempotency_keys')
      .set({ aik_update_time: now })
      .where('aik_api_idempotency_key_id', '=', row.aik_api_idempotency_key_id)
      .where('aik_state', '=', 'executing')
      .where('aik_update_time', '<', new Date(now.getTime() - EXECUTING_TIMEOUT_MS))
      .returning('aik_api_idempotency_key_id')
      .executeTakeFirst();
    return taken ? { kind: 'claimed', id: taken.aik_api_idempotency_key_id } : { kind: 'executing' };
  }

  /** Read-only look before input validation: 'unseen' means nothing stands in the way (yet). */
  async inspect(scope: string, keyHash: string, fingerprint: string): Promise<ClaimOutcome> {
    const row = await this.find(scope, keyHash);
    if (!row) return { kind: 'unseen' };
    if (row.aik_fingerprint !== fingerprint) return { kind: 'reused' };
    if (row.aik_state === 'stored') return { kind: 'replay', response: { status: row.aik_status ?? 200, body: row.aik_body ?? '' } };
    return { kind: 'unseen' };
  }

  /**
   * Claims the key with one insert that the unique (scope, hash) constraint arbitrates: of any number of
   * concurrent requests on any number of nodes, exactly one gets 'claimed'.
   */
  async claim(scope: string, keyHash: string, fingerprint: string, action: string): Promise<ClaimOutcome> {
    const now = this.clock.now();
    const inserted = await this.db
      .insertInto('aik_api_idempotency_keys')
      .values({
        aik_scope: scope,
        aik_key_hash: keyHash,
        aik_fingerprint: fingerprint,
        aik_action: action,
        aik_state: 'executing',
        aik_create_time: now,
        aik_update_time: now,
      })
      .onConflict((oc) => oc.columns(['aik_scope', 'aik_key_hash']).doNothing())
      .returning('aik_api_idempotency_key_id')
      .executeTakeFirst();
    if (inserted) return { kind: 'claimed', id: inserted.aik_api_idempotency_key_id };
    const row = await this.find(scope, keyHash);
    // Purged between the insert and the read: the caller may simply try again.
    if (!row) return { kind: 'executing' };
    return this.judge(row, fingerprint);
  }

  /**
   * Stores the response; pass the action's transaction so the result and its effects commit together
   * (there it is the last write, and goes to the embedded database with the commit: deferredWrite).
   */
  async store(id: number, response: StoredResponse, db: Kysely<DB> = this.db): Promise<void> {
    const update = db
      .updateTable('aik_api_idempotency_keys')
      .set({ aik_state: 'stored', aik_status: response.status, aik_body: response.body, aik_update_time: this.clock.now() })
      .where('aik_api_idempotency_key_id', '=', id);
    if (db.isTransaction) await deferredWrite(db, update);
    else await update.execute();
  }

  /** Gives a claim back when the request failed without a response worth replaying (a 5xx). */
  async release(id: number): Promise<void> {
    await this.db.deleteFrom('aik_api_idempotency_keys').where('aik_api_idempotency_key_id', '=', id).where('aik_state', '=', 'executing').execute();
  }

  async purgeOlderThan(cutoff: Date): Promise<number> {
    const result = await this.db.deleteFrom('aik_api_idempotency_keys').where('aik_create_time', '<', cutoff).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
