import { DEFAULT_APP_NAVIGATION, validateAppNavigation } from './app-navigation.js';

/** A typed setting: its name, what values it takes and the value it has when never set. */
export type SettingDefinition =
  | { name: string; type: 'boolean'; default: boolean; secret?: false; description: string }
  | { name: string; type: 'integer'; default: number; min?: number; max?: number; secret?: false; description: string }
  | { name: string; type: 'string'; default: string; maxLength?: number; secret?: boolean; description: string; pattern?: RegExp; patternHint?: string }
  | { name: string; type: 'enum'; default: string; options: readonly string[]; secret?: false; description: string }
  | { name: string; type: 'json'; default: unknown; secret?: boolean; description: string; validate?: (v: unknown) => string | null };

const bool = (name: string, def: boolean, description: string): SettingDefinition => ({ name, type: 'boolean', default: def, description });
const int = (name: string, def: number, description: string, min = 0, max = Number.MAX_SAFE_INTEGER): SettingDefinition => ({ name, type: 'integer', default: def, min, max, description });
const str = (name: string, description: string, opts: { secret?: boolean; def?: string } = {}): SettingDefinition => ({ name, type: 'string', default: opts.def ?? '', description, ...(opts.secret ? { secret: true } : {}) });

function isSemverMap(v: unknown): string | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'must be a JSON object mapping client_app to a minimum version';
  for (const [app, min] of Object.entries(v)) {
    if (typeof min !== 'string' || !/^\d+\.\d+\.\d+(?:[-+].*)?$/.test(min)) return `minimum version for '${app}' must be a semver string`;
  }
  return null;
}


/** Every setting the contract and the design name. Windows are in seconds. */
export const settingDefinitions: SettingDefinition[] = [
  // Transport
  bool('api_require_https', true, 'Refuse plain-HTTP API requests with 426'),
  str('api_allowed_origins', 'Comma-separated origins allowed by CORS; empty turns CORS off'),
  { name: 'api_min_client_versions', type: 'json', default: {}, description: 'Map of client_app to minimum semver', validate: isSemverMap },
  // Rate limits
  int('api_rate_limit_requests', 1000, 'General requests per window per IP', 1),
  int('api_rate_limit_window', 3600, 'General window, seconds', 1),
  int('api_session_rate_limit_requests', 5000, 'Signed-in browser-session requests per window per user', 1),
  int('api_session_rate_limit_window', 3600, 'Browser-session window, seconds', 1),
  int('api_auth_rate_limit_requests', 10, 'Failed authentication attempts per window per IP', 1),
  int('api_auth_rate_limit_window', 900, 'Failed-auth window, seconds', 1),
  int('api_device_link_rate_limit_requests', 600, 'Device-link start and poll per window per IP', 1),
  int('api_device_link_rate_limit_window', 3600, 'Device-link window, seconds', 1),
  int('api_agent_rate_limit_requests', 600, 'Agent channel requests per hour per IP', 1),
  int('api_upload_rate_limit_requests', 10000, 'Drive upload chunk requests per window', 1),
  int('api_upload_rate_limit_window', 3600, 'Drive upload window, seconds', 1),
  // Keys, idempotency, logs
  int('api_session_key_lifetime_days', 365, 'Lifetime of session keys issued by login', 1, 3650),
  int('idempotency_key_retention_hours', 24, 'How long idempotent responses are kept', 1, 24 * 365),
  int('api_request_log_retention_days', 90, 'How long request log rows are kept', 1, 3650),
  // Scheduled backups (DATA_DIR/backups/scheduled)
  int('backup_schedule_hours', 0, 'Take a backup every this many hours; 0 turns scheduled backups off', 0, 24 * 366),
  int('backup_keep', 7, 'Scheduled backups kept: after each one, older ones beyond this count are deleted', 1, 10000),
  // Website sessions
  int('web_session_lifetime_hours', 336, 'Longest a website session lives, hours', 1, 24 * 365),
  int('web_session_idle_minutes', 1440, 'A website session unused this long ends, minutes', 5, 60 * 24 * 90),
  // Store switches and subscription behaviour
  bool('products_active', false, 'Store: products are sold'),
  bool('subscriptions_active', false, 'Store: subscriptions are sold'),
  bool('subscription_downgrades_enabled', true, 'Allow users to downgrade'),
  { name: 'subscription_downgrade_timing', type: 'enum', default: 'end_of_period', options: ['immediate', 'end_of_period'], description: 'When a downgrade takes effect' },
  bool('subscription_cancellation_enabled', true, 'Allow users to cancel'),
  { name: 'subscription_cancellation_timing', type: 'enum', default: 'end_of_period', options: ['immediate', 'end_of_period'], description: 'When a cancellation takes effect' },
  bool('subscription_reactivation_enabled', true, 'Allow reactivating cancelled subscriptions'),
  bool('subscription_cancellation_prorate', false, 'Refund the unused period on immediate cancellation'),
  int('card_processor_grace_days', 7, 'Days a card-processor subscription whose renewal payment failed keeps its tier while the processor retries (docs/billing-sources.md)', 0, 365),
  int('wallet_provider_grace_days', 10, 'Days a wallet-provider subscription whose renewal payment failed keeps its tier while the provider retries (docs/billing-sources.md)', 0, 365),
  // Tier gating
  { name: 'tier_upgrade_url', type: 'string', default: '', description: 'URL of an upgrade flow; empty by default', pattern: /^(|https?:\/\/\S+|\/\S*)$/, patternHint: 'an http(s) URL or a site path' },
  int('tier_gate_preview_length', 0, 'Characters of body text shown before the gate; 0 means no preview', 0, 100000),
  bool('tier_gate_hide_from_listings', false, 'Hide gated items from listings of users lacking the tier'),
  // Features switched by setting
  bool('drive_active', false, 'Member Drive'),
  int('drive_max_folder_depth', 32, 'Deepest nesting of Drive folders', 1, 1000),
  int('drive_upload_chunk_bytes', 8 * 1024 * 1024, 'Largest chunk of a Drive upload, bytes (returned by drive_upload_init as chunk_bytes)', 64 * 1024, 64 * 1024 * 1024),
  int('upload_mail_import_archive_max_bytes', 4 * 1024 * 1024 * 1024, 'Most mail import archive bytes one member holds: each upload, and all held archives with open archive uploads together', 1),
  int('upload_member_import_max_bytes', 512 * 1024 * 1024, 'Most member import CSV bytes one staff member holds: each upload, and all held CSVs with open CSV uploads together', 1),
  // Passkeys
  int('passkey_stepup_window_seconds', 300, 'How long a passkey step-up lets a session enroll another passkey, seconds', 30, 3600),
  { name: 'app_navigation', type: 'json', default: DEFAULT_APP_NAVIGATION, description: 'Native-app navigation table (shape in docs/api/authentication.md, App navigation)', validate: validateAppNavigation },
  // Payment providers (secrets are never printed or exported)
  str('card_processor_webhook_secret', 'Card processor webhook signing secret', { secret: true }),
  str('card_processor_api_key', 'Card processor API key', { secret: true }),
  str('card_processor_api_base', 'Card processor API base URL (empty: the provider default)'),
  str('wallet_provider_webhook_id', 'Wallet provider webhook id'),
  str('wallet_provider_client_id', 'Wallet provider client id'),
  str('wallet_provider_client_secret', 'Wallet provider client secret', { secret: true }),
  str('wallet_provider_api_base', 'Wallet provider API base URL'),
  str('wallet_provider_cert_hosts', 'Hosts whose webhook certificate URLs are trusted: domains (https, subdomains included) or exact origins such as http://127.0.0.1:8080 for a local fake', { def: 'paypal.com' }),
  str('ios_store_bundle_id', 'iOS app bundle id'),
  { name: 'ios_store_environment', type: 'enum', default: 'Production', options: ['Production', 'Sandbox', 'Xcode', 'LocalTesting'], description: 'App Store environment' },
  str('ios_store_root_certificates', 'PEM list of Apple root certificates'),
  str('ios_store_app_apple_id', 'App Apple ID (numeric; required by the Production environment)'),
  str('ios_store_api_key_id', 'App Store Server API: the in-app purchase key id (App Store Connect, Users and Access, Integrations)'),
  str('ios_store_api_issuer_id', 'App Store Server API: the issuer id of the in-app purchase key'),
  str('ios_store_api_private_key', 'App Store Server API: the in-app purchase private key (PEM, the .p8 file)', { secret: true }),
  str('ios_store_api_base', 'App Store Server API base URL (empty: the host of ios_store_environment)'),
  str('android_store_package_name', 'Android package name'),
  str('android_store_push_audience', 'Expected audience of Pub/Sub push OIDC tokens'),
  str('android_store_push_email', 'Service account email of the Pub/Sub push subscription (the push token must be issued to it)'),
  str('android_store_api_base', 'Play Developer API base URL'),
  str('android_store_service_account', 'Service account JSON for the Play Developer API', { secret: true }),
  int('store_reconcile_hours', 24, 'Reconcile every subscription with its provider every this many hours; 0 turns it off', 0, 24 * 366),
  str('android_store_oidc_certs_url', 'Where the Pub/Sub push token signing certificates are fetched (key id to PEM)', { def: 'https://www.googleapis.com/oauth2/v1/certs' }),
  str('android_store_token_url', 'OAuth token endpoint for the Play Developer API service account', { def: 'https://oauth2.googleapis.com/token' }),
  // Outbound webhooks (DESIGN 15)
  bool('webhook_allow_private_targets', false, 'Let webhook endpoints be plain http or resolve to private, loopback or link-local addresses (local receivers and tests only)'),
  // Mail
  { name: 'smtp_url', type: 'string', default: '', secret: true, pattern: /^(|smtps?:\/\/[^\s/]+(:\d+)?\/?)$/, patternHint: 'smtp://user:pass@host:587 or smtps://user:pass@host:465', description: 'SMTP server as smtp://user:pass@host:587 (smtps:// for TLS from the start; user and password percent-encoded); takes precedence over smtp_host. With neither, outgoing mail is kept in the outbox (/admin/outbox)' },
  str('smtp_host', 'SMTP host (when smtp_url is empty); empty keeps outgoing mail in the outbox table'),
  int('smtp_port', 587, 'SMTP port', 1, 65535),
  str('smtp_user', 'SMTP user'),
  str('smtp_password', 'SMTP password', { secret: true }),
  { name: 'mail_from_address', type: 'string', default: 'no-reply@localhost', maxLength: 255, pattern: /^[^\s@<>"(),;:]+@[^\s@<>"(),;:]+$/, patternHint: 'an email address such as members@example.org', description: 'Sender (From) address of all mail the site sends; shown under the site name' },
  { name: 'site_name', type: 'string', default: 'Gatehouse', maxLength: 100, pattern: /^[^\r\n]*\S[^\r\n]*$/, patternHint: 'one line of text, not empty', description: 'Site name: in page titles, the header, mail subjects and as the name mail is sent under' },
  // Member emails (DESIGN 15; templates on /admin/emails)
  bool('email_welcome_active', false, 'Mail a welcome to every new member (member.created: registration, admin-created and imported members); off, self-registration still sends its own short welcome'),
  int('renewal_reminder_days', 7, 'Remind members this many days before an auto-renewing subscription renews; 0 turns the reminder off', 0, 365),
];
