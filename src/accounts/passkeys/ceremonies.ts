import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';

export type CeremonyKind = 'login' | 'register' | 'stepup' | 'vault_setup' | 'vault_unlock' | 'vault_add' | 'vault_rotate';

/** A challenge lives five minutes (DESIGN 10). */
export const CEREMONY_TTL_MS = 5 * 60_000;

/** Starts a ceremony for a browser session; a pending one of any kind is replaced (one per session). */
export async function beginCeremony(
  db: Kysely<DB>,
  clock: Clock,
  input: { webSessionId: number; kind: CeremonyKind; challenge: string; userId: number | null },
): Promise<void> {
  const now = clock.now();
  const values = {
    pkc_kind: input.kind,
    pkc_challenge: input.challenge,
    pkc_usr_user_id: input.userId,
    pkc_create_time: now,
    pkc_expires_time: new Date(now.getTime() + CEREMONY_TTL_MS),
  };
  await db
    .insertInto('pkc_passkey_ceremonies')
    .values({ pkc_wss_web_session_id: input.webSessionId, ...values })
    .onConflict((oc) => oc.column('pkc_wss_web_session_id').doUpdateSet(values))
    .execute();
}

export type ConsumedCeremony =
  | { kind: 'ok'; challenge: string; userId: number | null }
  | { kind: 'missing' }
  | { kind: 'expired' };

/**
 * Takes the session's pending ceremony of this kind, in one statement: whatever the verification then
 * decides, the challenge is spent, so an assertion can never be replayed against it.
 */
export async function consumeCeremony(db: Kysely<DB>, clock: Clock, webSessionId: number, kind: CeremonyKind): Promise<ConsumedCeremony> {
  const row = await db
    .deleteFrom('pkc_passkey_ceremonies')
    .where('pkc_wss_web_session_id', '=', webSessionId)
    .where('pkc_kind', '=', kind)
    .returning(['pkc_challenge', 'pkc_usr_user_id', 'pkc_expires_time'])
    .executeTakeFirst();
  if (!row) return { kind: 'missing' };
  if (row.pkc_expires_time.getTime() <= clock.nowMs()) return { kind: 'expired' };
  return { kind: 'ok', challenge: row.pkc_challenge, userId: row.pkc_usr_user_id };
}
