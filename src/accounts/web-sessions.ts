import { createHmac } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import { randomHex, safeEqual, sha256Hex } from '../lib/crypto.js';
import type { Settings } from '../settings/store.js';

// The cookie and header names are the transport's (src/http/transport.ts); named here too for callers
// that think of them as the session's.
export { CSRF_HEADER, CSRF_MIRROR_COOKIE, SESSION_COOKIE } from '../http/transport.js';

export interface WebSession {
  id: number;
  userId: number | null;
  /** The staff member who signed in as this user, when the session is a login-as. */
  loginAsBy: number | null;
  context: 'web' | 'app';
  /** The session-wide CSRF token (distinct from per-form tokens). */
  csrfToken: string;
  data: Record<string, unknown>;
  expiresTime: Date;
  lastSeenTime: Date;
}

const TOUCH_EVERY_MS = 60_000;

/**
 * Website sessions kept in the database. The cookie carries a random 256-bit id; the table holds only its
 * SHA-256. Sessions end at their absolute lifetime or after the idle timeout, whichever is first.
 */
export class WebSessions {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly settings: Settings,
  ) {}

  async load(cookieValue: string | undefined): Promise<WebSession | null> {
    if (!cookieValue || !/^[0-9a-f]{64}$/.test(cookieValue)) return null;
    const row = await this.db
      .selectFrom('wss_web_sessions')
      .selectAll()
      .where('wss_id_hash', '=', sha256Hex(cookieValue))
      .where('wss_delete_time', 'is', null)
      .executeTakeFirst();
    if (!row) return null;
    const now = this.clock.nowMs();
    const idleMs = this.settings.int('web_session_idle_minutes') * 60_000;
    if (row.wss_expires_time.getTime() <= now || row.wss_last_seen_time.getTime() + idleMs <= now) return null;
    const session: WebSession = {
      id: row.wss_web_session_id,
      userId: row.wss_usr_user_id,
      loginAsBy: row.wss_login_as_usr_user_id,
      context: row.wss_context,
      csrfToken: row.wss_csrf_token,
      data: row.wss_data ?? {},
      expiresTime: row.wss_expires_time,
      lastSeenTime: row.wss_last_seen_time,
    };
    if (now - session.lastSeenTime.getTime() >= TOUCH_EVERY_MS) {
      await this.db.updateTable('wss_web_sessions').set({ wss_last_seen_time: this.clock.now() }).where('wss_web_session_id', '=', session.id).execute();
      session.lastSeenTime = this.clock.now();
    }
    return session;
  }

  /** Starts a session; returns the cookie value (shown once) and the session. */
  async create(input: { userId: number | null; loginAsBy?: number | null; context?: 'web' | 'app'; data?: Record<string, unknown> }): Promise<{ cookieValue: string; session: WebSession }> {
    const cookieValue = randomHex(32);
    const csrfToken = randomHex(32);
    const now = this.clock.now();
    const expiresTime = new Date(now.getTime() + this.settings.int('web_session_lifetime_hours') * 3600_000);
    const row = await this.db
      .insertInto('wss_web_sessions')
      .values({
        wss_id_hash: sha256Hex(cookieValue),
        wss_csrf_token: csrfToken,
        wss_usr_user_id: input.userId,
        wss_login_as_usr_user_id: input.loginAsBy ?? null,
        wss_context: input.context ?? 'web',
        wss_data: JSON.stringify(input.data ?? {}),
        wss_create_time: now,
        wss_last_seen_time: now,
        wss_expires_time: expiresTime,
      })
      .returning('wss_web_session_id')
      .executeTakeFirstOrThrow();
    return {
      cookieValue,
      session: {
        id: row.wss_web_session_id,
        userId: input.userId,
        loginAsBy: input.loginAsBy ?? null,
        context: input.context ?? 'web',
        csrfToken,
        data: input.data ?? {},
        expiresTime,
        lastSeenTime: now,
      },
    };
  }

  /**
   * Signing in always rotates: the old session ends and a new id and CSRF token are issued, carrying the
   * old session's data over (a guest's cart survives sign-in).
   */
  async signIn(previous: WebSession | null, userId: number, opts: { loginAsBy?: number | null; context?: 'web' | 'app' } = {}) {
    if (previous) await this.end(previous.id);
    return this.create({ userId, loginAsBy: opts.loginAsBy ?? null, context: opts.context ?? 'web', data: previous?.data ?? {} });
  }

  async end(id: number): Promise<void> {
    await this.db.updateTable('wss_web_sessions').set({ wss_delete_time: this.clock.now() }).where('wss_web_session_id', '=', id).where('wss_delete_time', 'is', null).execute();
  }

  /** Persists session data (only for actions that declare session_write). */
  async saveData(id: number, data: Record<string, unknown>): Promise<void> {
    await this.db.updateTable('wss_web_sessions').set({ wss_data: JSON.stringify(data) }).where('wss_web_session_id', '=', id).execute();
  }

  /** Deletes sessions that can no longer be used (tasks pass the connection they hold). */
  async purge(db: Kysely<DB> = this.db): Promise<number> {
    const now = this.clock.now();
    const idleCutoff = new Date(now.getTime() - this.settings.int('web_session_idle_minutes') * 60_000);
    const result = await db
      .deleteFrom('wss_web_sessions')
      .where((eb) => eb.or([eb('wss_expires_time', '<=', now), eb('wss_last_seen_time', '<=', idleCutoff), eb('wss_delete_time', 'is not', null)]))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

/** A per-form token: derived from the session token and the form's name, so it differs from both. */
export function formToken(session: WebSession, formName: string): string {
  return createHmac('sha256', session.csrfToken).update(`form:${formName}`).digest('hex');
}

export function checkFormToken(session: WebSession | null, formName: string, presented: unknown): boolean {
  return session !== null && typeof presented === 'string' && safeEqual(presented, formToken(session, formName));
}
