/**
 * The shape of setting `app_navigation` (documented in the README):
 * {
 *   "entries": [
 *     { "slug": "subscription", "label": "Subscription",
 *       "destination": { "type": "web", "url": "/profile/subscription" } },
 *     { "slug": "drive", "label": "Drive",
 *       "destination": { "type": "native", "screen": "drive", "fallback_url": "/drive" },
 *       "requires_setting": "drive_active", "min_permission": 0 },
 *     { "slug": "sign_out", "label": "Sign out", "shell_auth": true,
 *       "destination": { "type": "native", "screen": "sign_out", "fallback_url": "/logout" } }
 *   ],
 *   "tabs": { "ios": ["subscription", "drive"], "android": ["subscription"] }
 * }
 */
export interface NavigationDestinationWeb {
  type: 'web';
  url: string;
}
export interface NavigationDestinationNative {
  type: 'native';
  screen: string;
  fallback_url: string;
}
export interface NavigationEntry {
  slug: string;
  label: string;
  destination: NavigationDestinationWeb | NavigationDestinationNative;
  /** Shown only to users with at least this usr_permission. */
  min_permission?: number;
  /** Shown only while this setting is truthy. */
  requires_setting?: string;
  /** Sign-in/sign-out entries the app shell draws itself: never sent. */
  shell_auth?: boolean;
}
export interface AppNavigation {
  entries: NavigationEntry[];
  tabs: Record<string, string[]>;
}

/**
 * The table a fresh install serves: the member's subscription, Drive (hidden while drive_active is off;
 * the app opens its own Drive screen, or the Drive page where it has none) and security (passkeys and
 * vault), pinned as tabs for the iOS and Android apps.
 */
export const DEFAULT_APP_NAVIGATION: AppNavigation = {
  entries: [
    { slug: 'subscription', label: 'Subscription', destination: { type: 'web', url: '/profile/subscription' } },
    { slug: 'drive', label: 'Drive', destination: { type: 'native', screen: 'drive', fallback_url: '/drive' }, requires_setting: 'drive_active' },
    { slug: 'security', label: 'Security', destination: { type: 'web', url: '/profile/security' } },
  ],
  tabs: { ios: ['subscription', 'drive', 'security'], android: ['subscription', 'drive', 'security'] },
};

const isString = (v: unknown): v is string => typeof v === 'string' && v !== '';
const isPath = (v: unknown): boolean => isString(v) && (/^\/(?!\/)/.test(v) || /^https:\/\//.test(v));

/** Returns a message naming the first problem, or null when the value is a valid navigation table. */
export function validateAppNavigation(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be a JSON object with entries and tabs';
  const nav = value as Record<string, unknown>;
  if (!Array.isArray(nav.entries)) return 'entries must be an array';
  const slugs = new Set<string>();
  for (const [i, e] of nav.entries.entries()) {
    if (typeof e !== 'object' || e === null) return `entries[${i}] must be an object`;
    const entry = e as Record<string, unknown>;
    if (!isString(entry.slug) || !/^[a-z0-9_-]{1,64}$/.test(entry.slug)) return `entries[${i}].slug must be a short lowercase slug`;
    if (slugs.has(entry.slug)) return `entries[${i}].slug '${entry.slug}' is repeated`;
    slugs.add(entry.slug);
    if (!isString(entry.label)) return `entries[${i}].label must be a string`;
    const d = entry.destination as Record<string, unknown> | undefined;
    if (!d || (d.type !== 'web' && d.type !== 'native')) return `entries[${i}].destination.type must be 'web' or 'native'`;
    if (d.type === 'web' && !isPath(d.url)) return `entries[${i}].destination.url must be a site path or https URL`;
    if (d.type === 'native' && (!isString(d.screen) || !isPath(d.fallback_url))) return `entries[${i}].destination needs screen and fallback_url`;
    if (entry.min_permission !== undefined && !Number.isInteger(entry.min_permission)) return `entries[${i}].min_permission must be an integer`;
    if (entry.requires_setting !== undefined && !isString(entry.requires_setting)) return `entries[${i}].requires_setting must be a setting name`;
    if (entry.shell_auth !== undefined && typeof entry.shell_auth !== 'boolean') return `entries[${i}].shell_auth must be a boolean`;
  }
  const tabs = nav.tabs ?? {};
  if (typeof tabs !== 'object' || tabs === null || Array.isArray(tabs)) return 'tabs must be an object mapping client_app to slugs';
  for (const [app, list] of Object.entries(tabs)) {
    if (!Array.isArray(list) || !list.every((s) => typeof s === 'string' && slugs.has(s))) return `tabs.${app} must list slugs of declared entries`;
  }
  return null;
}
