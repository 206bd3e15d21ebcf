import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import { displayName } from './users.js';
import type { TierSummary, UserTier } from '../tiers/features.js';

export interface SessionUserSummary {
  user_id: number;
  display_name: string;
  email: string;
  permission: number;
  tier: TierSummary | null;
}

/** Resolves the user's tier for the summary (the app's tier system satisfies it). */
export interface SessionTiers {
  sessionTier(db: Kysely<DB>, userId: number, known?: UserTier | null): Promise<TierSummary | null>;
}

/** The session user summary returned by login and GET auth/session. */
export async function sessionUserSummary(
  db: Kysely<DB>,
  tiers: SessionTiers,
  user: { usr_user_id: number; usr_email: string; usr_first_name: string; usr_last_name: string | null; usr_nickname: string | null; usr_permission: number },
  /** The user's tier when the caller has read it already (undefined: read it here). */
  knownTier?: UserTier | null,
): Promise<SessionUserSummary> {
  return {
    user_id: user.usr_user_id,
    display_name: displayName(user),
    email: user.usr_email,
    permission: user.usr_permission,
    tier: await tiers.sessionTier(db, user.usr_user_id, knownTier),
  };
}
