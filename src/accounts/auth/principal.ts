import type { ApiKeyType } from '../../db/types.js';
import type { UserTier } from '../../tiers/features.js';

export type Credential = 'machine' | 'session' | 'browser' | 'guest';

export interface PrincipalUser {
  usr_user_id: number;
  usr_email: string;
  usr_first_name: string;
  usr_last_name: string | null;
  usr_nickname: string | null;
  /** The role axis: 5 staff, 10 superadmin. Passed to per-record checks as current_user_permission. */
  usr_permission: number;
}

export interface PrincipalKey {
  apk_api_key_id: number;
  apk_type: ApiKeyType;
  apk_permission: number;
  apk_public_key: string;
}

/** Who is calling: produced exactly once per request by the authentication stage. */
export interface Principal {
  credential: Credential;
  /** The API key presented; null for browser sessions and guests. */
  apiKey: PrincipalKey | null;
  /** The acting user; null only for the anonymous browser principal (guest). */
  user: PrincipalUser | null;
  /** The capability level: the key's apk_permission, or 4 for session keys and browser sessions. */
  capability: number;
  /** Browser sessions: the website session behind the principal. */
  webSessionId?: number;
  /** A login-as browser session: the staff member acting as `user`. */
  loginAsBy?: number | null;
  /** The user's tier when authentication read it along with the key (undefined: not read). */
  userTier?: UserTier | null;
}
