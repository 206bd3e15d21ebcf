import type { ColumnType, Generated } from 'kysely';

/** A timestamp column: read as a UTC Date, written as a Date. */
export type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Nullable<T> = T | null;
/** A timestamp column with a database default. */
export type GeneratedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>;
/** A jsonb column: read parsed, written as JSON text or a value. */
export type Json<T = unknown> = ColumnType<T, string | T, string | T>;

export interface SettingsTable {
  stg_setting_id: Generated<number>;
  stg_name: string;
  stg_value: Nullable<string>;
  stg_group_name: Nullable<string>;
  stg_usr_user_id: Nullable<number>;
  stg_create_time: GeneratedTimestamp;
  stg_update_time: GeneratedTimestamp;
}

export interface UsersTable {
  usr_user_id: Generated<number>;
  usr_first_name: string;
  usr_last_name: Nullable<string>;
  usr_email: string;
  usr_password: Nullable<string>;
  usr_permission: Generated<number>;
  usr_timezone: Generated<string>;
  usr_email_is_verified: Generated<boolean>;
  usr_is_activated: Generated<boolean>;
  usr_is_disabled: Generated<boolean>;
  usr_force_password_change: Generated<boolean>;
  usr_nickname: Nullable<string>;
  usr_lastlogin_time: Nullable<Timestamp>;
  usr_contact_preferences: ColumnType<string | null, string | null | undefined, string | null>;
  usr_contact_preference_last_changed: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  usr_bio: ColumnType<string | null, string | null | undefined, string | null>;
  usr_date_of_birth: ColumnType<string | null, string | null | undefined, string | null>;
  usr_gender: ColumnType<string | null, string | null | undefined, string | null>;
  usr_signup_ip: ColumnType<string | null, string | null | undefined, string | null>;
  usr_signup_date: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  usr_stripe_customer_id: ColumnType<string | null, string | null | undefined, string | null>;
  usr_phn_phone_number_id: ColumnType<number | null, number | null | undefined, number | null>;
  usr_email_is_verified_time: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  usr_create_time: GeneratedTimestamp;
  usr_update_time: GeneratedTimestamp;
  usr_delete_time: Nullable<Timestamp>;
}

export type ApiKeyType = 'machine' | 'session';

export interface ApiKeysTable {
  apk_api_key_id: Generated<number>;
  apk_usr_user_id: number;
  apk_name: Nullable<string>;
  apk_public_key: string;
  apk_secret_hash: string;
  apk_type: ApiKeyType;
  apk_permission: number;
  apk_ip_restriction: Nullable<string>;
  apk_start_time: Nullable<Timestamp>;
  apk_expires_time: Nullable<Timestamp>;
  apk_last_used_time: Nullable<Timestamp>;
  apk_is_active: Generated<boolean>;
  apk_create_time: GeneratedTimestamp;
  apk_update_time: GeneratedTimestamp;
  apk_delete_time: Nullable<Timestamp>;
}

export interface RequestLogsTable {
  rql_request_log_id: Generated<number>;
  rql_feature: Nullable<string>;
  rql_action: Nullable<string>;
  rql_ip_address: Nullable<string>;
  rql_usr_user_id: Nullable<number>;
  rql_api_key_type: Nullable<string>;
  rql_was_success: boolean;
  rql_status_code: Nullable<number>;
  rql_error_type: Nullable<string>;
  rql_note: Nullable<string>;
  rql_response_ms: Nullable<number>;
  rql_create_time: Timestamp;
}

export interface TaskRunsTable {
  tsk_name: string;
  tsk_last_start_time: Nullable<Timestamp>;
  tsk_last_end_time: Nullable<Timestamp>;
  tsk_last_outcome: Nullable<string>;
  tsk_last_error: Nullable<string>;
  tsk_last_result: Nullable<Json>;
  tsk_run_count: Generated<number>;
}

export interface PluginsTable {
  plg_name: string;
  plg_is_active: boolean;
  plg_update_time: GeneratedTimestamp;
}

export interface GroupsTable {
  grp_group_id: Generated<number>;
  grp_name: string;
  grp_description: Nullable<string>;
  grp_usr_user_id_created: Nullable<number>;
  grp_category: Nullable<string>;
  grp_create_time: GeneratedTimestamp;
  grp_update_time: GeneratedTimestamp;
  grp_delete_time: Nullable<Timestamp>;
}

export type AssignmentMethod = 'purchase' | 'manual' | 'other';
/** The states of a subscription's order item (DESIGN 14); a tier membership row carries only the first five. */
export type SubscriptionStatus = 'active' | 'cancelled' | 'expired' | 'refunded' | 'replaced' | 'in_grace' | 'on_hold' | 'paused';
export type MembershipSubscriptionStatus = 'active' | 'cancelled' | 'expired' | 'refunded' | 'replaced';

export interface GroupMembersTable {
  grm_group_member_id: Generated<number>;
  grm_grp_group_id: number;
  /** The member's user id. */
  grm_foreign_key_id: number;
  grm_create_time: GeneratedTimestamp;
  grm_assigned_time: GeneratedTimestamp;
  grm_assignment_method: ColumnType<AssignmentMethod, AssignmentMethod | undefined, AssignmentMethod>;
  grm_subscription_status: Nullable<MembershipSubscriptionStatus>;
  /** Set only on tier memberships (at most one per user). */
  grm_sbt_subscription_tier_id: Nullable<number>;
}

export type FeatureValue = number | boolean | string;

export interface SubscriptionTiersTable {
  sbt_subscription_tier_id: Generated<number>;
  sbt_grp_group_id: number;
  sbt_tier_level: number;
  sbt_name: string;
  sbt_display_name: string;
  sbt_description: Nullable<string>;
  sbt_features: ColumnType<Record<string, FeatureValue>, string | undefined, string>;
  sbt_is_active: Generated<boolean>;
  sbt_create_time: GeneratedTimestamp;
  sbt_update_time: GeneratedTimestamp;
  sbt_delete_time: Nullable<Timestamp>;
}

export interface ChangeTrackingTable {
  cht_change_tracking_id: Generated<number>;
  cht_entity_type: string;
  cht_entity_id: Nullable<number>;
  cht_usr_user_id: Nullable<number>;
  cht_field_name: Nullable<string>;
  cht_old_value: Nullable<string>;
  cht_new_value: Nullable<string>;
  cht_change_time: GeneratedTimestamp;
  cht_change_reason: Nullable<string>;
  cht_reference_type: Nullable<string>;
  cht_reference_id: Nullable<number>;
  cht_changed_by_usr_user_id: Nullable<number>;
  cht_metadata: Nullable<string>;
}

export type IdempotencyState = 'executing' | 'stored';

export interface ApiIdempotencyKeysTable {
  aik_api_idempotency_key_id: Generated<number>;
  aik_scope: string;
  aik_key_hash: string;
  aik_fingerprint: string;
  aik_action: string;
  aik_state: IdempotencyState;
  aik_status: Nullable<number>;
  aik_body: Nullable<string>;
  aik_create_time: GeneratedTimestamp;
  aik_update_time: GeneratedTimestamp;
}

export type ActivationCodePurpose = 'password_reset' | 'activation';

export interface ActivationCodesTable {
  act_activation_code_id: Generated<number>;
  act_usr_user_id: number;
  act_purpose: ActivationCodePurpose;
  act_code_hash: string;
  act_expires_time: Timestamp;
  act_used_time: Nullable<Timestamp>;
  act_create_time: GeneratedTimestamp;
}

export interface MailOutboxTable {
  mob_mail_outbox_id: Generated<number>;
  mob_to: string;
  mob_from: string;
  mob_subject: string;
  mob_text: string;
  mob_template: Nullable<string>;
  mob_create_time: GeneratedTimestamp;
  /** The HTML part, when the message has one (0039). */
  mob_html: ColumnType<string | null, string | null | undefined, string | null>;
}

/** A member email template's edits (0039): the defaults are in src/outbound/emails/templates.ts. */
export interface MemberEmailTemplatesTable {
  met_key: string;
  met_subject: string;
  met_body: string;
  met_active: boolean;
  met_update_time: GeneratedTimestamp;
}

export type MemberEmailStatus = 'pending' | 'sent' | 'skipped' | 'failed';

/** One member email to send (0039): at most one per (source, template, recipient). */
export interface MemberEmailsTable {
  mem_member_email_id: Generated<number>;
  /** The outbound event's uid, or `renewal:{order item}:{period end}` for the renewal reminder. */
  mem_source: string;
  mem_template: string;
  mem_usr_user_id: number;
  mem_to: string;
  mem_obe_outbound_event_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** Placeholder values of an email that has no event (the renewal reminder). */
  mem_data: ColumnType<unknown, string | null | undefined, string | null>;
  mem_status: ColumnType<MemberEmailStatus, MemberEmailStatus | undefined, MemberEmailStatus>;
  mem_attempts: Generated<number>;
  mem_next_attempt_time: Timestamp;
  mem_last_error: ColumnType<string | null, string | null | undefined, string | null>;
  mem_sent_time: ColumnType<Date | null, Date | null | undefined, Date | null>;
  mem_create_time: GeneratedTimestamp;
}

/** One row per post whose post.published event was written (0037). */
export interface PostPublicationEventsTable {
  ppe_pst_post_id: number;
  ppe_obe_uid: Nullable<string>;
  ppe_published_time: Nullable<Timestamp>;
  ppe_create_time: GeneratedTimestamp;
}

/** The key that seals webhook endpoint secrets at rest (one row, created on first use). */
export interface WebhookKeysTable {
  whk_webhook_key_id: number;
  whk_key: string;
  whk_create_time: GeneratedTimestamp;
}

export interface WebhookEndpointsTable {
  whe_webhook_endpoint_id: Generated<number>;
  whe_url: string;
  whe_description: Generated<string>;
  /** The event types sent to it; empty: every type. */
  whe_event_types: Json<string[]>;
  whe_enabled: Generated<boolean>;
  /** `whsec_...` sealed with whk_webhook_keys; never exported. */
  whe_secret_sealed: string;
  /** The secret before the last rotation, still signing until whe_previous_secret_expires_time. */
  whe_previous_secret_sealed: Opt<string>;
  whe_previous_secret_expires_time: OptTime;
  /** Since when every attempt has failed (null after a success). */
  whe_failing_since_time: OptTime;
  /** Why it was disabled: gone (410), failing (5 days), or manual. */
  whe_disabled_reason: Opt<string>;
  whe_create_time: GeneratedTimestamp;
  whe_update_time: GeneratedTimestamp;
}

export interface WebhookDeliveriesTable {
  whd_webhook_delivery_id: Generated<number>;
  whd_obe_outbound_event_id: number;
  whd_whe_webhook_endpoint_id: number;
  /** pending, succeeded or failed (the schedule ran out). */
  whd_status: Generated<string>;
  whd_attempt_count: Generated<number>;
  /** When it is due; a worker's claim moves it a lease ahead, so a crashed worker's claim comes due again. */
  whd_next_attempt_time: Date | string;
  whd_claim_token: Opt<string>;
  whd_last_attempt_time: OptTime;
  whd_last_status_code: Opt<number>;
  whd_create_time: GeneratedTimestamp;
  whd_update_time: GeneratedTimestamp;
}

export interface WebhookAttemptsTable {
  wha_webhook_attempt_id: Generated<number>;
  wha_whd_webhook_delivery_id: number;
  wha_whe_webhook_endpoint_id: number;
  wha_attempt_time: Date | string;
  wha_status_code: Opt<number>;
  wha_duration_ms: number;
  /** The first 1 KB of the answer. */
  wha_response_body: Opt<string>;
  wha_error: Opt<string>;
}

export interface OutboundEventsTable {
  obe_outbound_event_id: Generated<number>;
  obe_uid: string;
  obe_type: string;
  obe_usr_user_id: Nullable<number>;
  obe_payload: Json;
  obe_create_time: GeneratedTimestamp;
}

export interface WebSessionsTable {
  wss_web_session_id: Generated<number>;
  wss_id_hash: string;
  wss_csrf_token: string;
  wss_usr_user_id: Nullable<number>;
  wss_login_as_usr_user_id: Nullable<number>;
  wss_context: 'web' | 'app';
  wss_data: Json<Record<string, unknown>>;
  wss_create_time: GeneratedTimestamp;
  wss_last_seen_time: GeneratedTimestamp;
  wss_expires_time: Timestamp;
  wss_delete_time: Nullable<Timestamp>;
}

export interface WebSessionBridgesTable {
  wsb_web_session_bridge_id: Generated<number>;
  wsb_token_hash: string;
  wsb_usr_user_id: number;
  wsb_apk_api_key_id: number;
  wsb_target: string;
  wsb_create_time: GeneratedTimestamp;
  wsb_expires_time: Timestamp;
  wsb_used_time: Nullable<Timestamp>;
}

export type DeviceLinkStatus = 'pending' | 'approved' | 'denied' | 'delivered';

export interface DeviceLinksTable {
  dvl_device_link_id: Generated<number>;
  dvl_poll_token_hash: string;
  dvl_link_code: string;
  dvl_device_name: string;
  dvl_platform: 'macos' | 'windows' | 'linux';
  dvl_device_pubkey: Nullable<string>;
  dvl_status: Generated<DeviceLinkStatus>;
  dvl_usr_user_id: Nullable<number>;
  dvl_apk_api_key_id: Nullable<number>;
  dvl_create_time: GeneratedTimestamp;
  dvl_expires_time: Timestamp;
  dvl_decided_time: Nullable<Timestamp>;
  dvl_delivered_time: Nullable<Timestamp>;
  /** The approving user's vault secret sealed to dvl_device_pubkey; null once delivered. */
  dvl_sealed_vault_key: Nullable<string>;
}

export type PaymentSource = 'card_processor' | 'wallet_provider' | 'ios_store' | 'android_store';
type Opt<T> = ColumnType<T | null, T | null | undefined, T | null>;
type OptTime = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

/** The store's view of pro_products: the columns the store reads and writes. */
export interface ProductsTable {
  pro_product_id: Generated<number>;
  pro_name: string;
  pro_link: string;
  pro_is_active: Opt<boolean>;
  pro_sbt_subscription_tier_id: Opt<number>;
  pro_card_price_id: Opt<string>;
  pro_wallet_plan_id: Opt<string>;
  pro_ios_product_id: Opt<string>;
  pro_android_product_id: Opt<string>;
  /** Minor units (cents) in pro_currency. */
  pro_price: Opt<number>;
  pro_currency: Generated<string>;
  pro_max_cart_count: Opt<number>;
  pro_create_time: GeneratedTimestamp;
  pro_update_time: GeneratedTimestamp;
  pro_delete_time: OptTime;
}

export interface OrdersTable {
  ord_order_id: Generated<number>;
  ord_usr_user_id: Opt<number>;
  ord_timestamp: GeneratedTimestamp;
  /** Minor units in ord_currency. */
  ord_total_cost: Opt<number>;
  ord_currency: Generated<string>;
  ord_stripe_session_id: Opt<string>;
  ord_stripe_payment_intent_id: Opt<string>;
  ord_stripe_invoice_id: Opt<string>;
  ord_stripe_charge_id: Opt<string>;
  ord_paypal_order_id: Opt<string>;
  ord_status: Opt<number>;
  ord_error: Opt<string>;
  ord_refund_amount: Opt<number>;
  ord_refund_time: OptTime;
  ord_refund_note: Opt<string>;
  ord_payment_method: Opt<string>;
  ord_payment_source: Opt<PaymentSource>;
  ord_raw_cart: Opt<string>;
  ord_test_mode: Generated<boolean | null>;
  ord_create_time: GeneratedTimestamp;
  ord_update_time: GeneratedTimestamp;
  ord_delete_time: OptTime;
}

export interface OrderItemsTable {
  odi_order_item_id: Generated<number>;
  odi_ord_order_id: number;
  odi_pro_product_id: number;
  odi_product_info: Opt<string>;
  /** Minor units in odi_currency. */
  odi_price: Opt<number>;
  odi_currency: Generated<string>;
  odi_status: Opt<number>;
  odi_status_change_time: GeneratedTimestamp;
  odi_usr_user_id: Opt<number>;
  odi_stripe_subscription_id: Opt<string>;
  odi_paypal_subscription_id: Opt<string>;
  odi_is_subscription: Opt<boolean>;
  odi_subscription_cancelled_time: OptTime;
  odi_refund_amount: Opt<number>;
  odi_refund_note: Opt<string>;
  odi_refund_time: OptTime;
  odi_stripe_foreign_invoice_id: Opt<string>;
  odi_subscription_status: Opt<SubscriptionStatus>;
  odi_subscription_period_end: OptTime;
  odi_subscription_cancel_at_period_end: Generated<boolean | null>;
  odi_payment_source: Opt<PaymentSource>;
  /** The provider's subscription reference (or payment reference for a one-time purchase). */
  odi_subscription_reference: Opt<string>;
  /** Provider time of the latest event applied: an older event never undoes newer state. */
  odi_last_event_time: OptTime;
  /** Set when the purchase was refused for tier purposes: another source was active for the user. */
  odi_source_conflict_time: OptTime;
  /** The lifecycle's columns (0010): the paid period's start, a downgrade scheduled for the period end. */
  odi_subscription_period_start: OptTime;
  odi_scheduled_pro_product_id: Opt<number>;
  odi_scheduled_change_time: OptTime;
  /** Set when the grant was skipped by the upgrade-only rule: the subscription holds no tier (DESIGN 14). */
  odi_tier_skipped_time: OptTime;
  /** in_grace: access is kept until then (DESIGN 14). */
  odi_subscription_grace_until: OptTime;
  /** paused: when the provider says the subscription resumes (null: not stated). */
  odi_subscription_resume_time: OptTime;
  odi_create_time: GeneratedTimestamp;
  odi_update_time: GeneratedTimestamp;
  odi_delete_time: OptTime;
}

/** A payment that paid for a subscription's period: the period's own, or an upgrade's prorated charge (0034). */
export interface SubscriptionPaymentsTable {
  sbp_subscription_payment_id: Generated<number>;
  sbp_odi_order_item_id: number;
  sbp_source: PaymentSource;
  sbp_kind: 'period' | 'upgrade';
  /** Payment intent, charge, wallet sale or capture; null while the provider has not been asked for it. */
  sbp_payment_reference: Opt<string>;
  sbp_invoice_reference: Opt<string>;
  /** Minor units in sbp_currency. */
  sbp_amount: number;
  sbp_currency: string;
  /** The part of the period this payment paid for: from this time to the period end. */
  sbp_covers_from: Date;
  sbp_covers_until: OptTime;
  sbp_refunded_amount: Generated<number>;
  sbp_create_time: GeneratedTimestamp;
}

export interface WebhookLogsTable {
  wbh_webhook_log_id: Generated<number>;
  wbh_provider: string;
  wbh_event_type: Opt<string>;
  wbh_event_id: string;
  wbh_payload: ColumnType<unknown, string | undefined, string>;
  wbh_processed: Generated<boolean | null>;
  wbh_error_message: Opt<string>;
  wbh_event_time: OptTime;
  wbh_create_time: GeneratedTimestamp;
  wbh_update_time: OptTime;
  /** Why a verified event was kept as not applied (listed and replayable); null when it was applied. */
  wbh_unresolved_reason: Opt<UnresolvedReason>;
  /** When the operator's replay applied it (once). */
  wbh_replay_time: OptTime;
}

/** Why a verified store event was not applied when it arrived (DESIGN 13). */
export type UnresolvedReason = 'unknown_user' | 'unknown_product' | 'store_inactive';

/** A removal or status change kept until its subscription's purchase arrives, once per provider reference. */
export interface StorePendingEventsTable {
  spe_store_pending_event_id: Generated<number>;
  spe_wbh_webhook_log_id: number;
  spe_source: PaymentSource;
  spe_reference: string;
  /** The normalised event (times as ISO strings). */
  spe_event: ColumnType<unknown, string, string>;
  spe_event_time: Timestamp;
  spe_applied_time: OptTime;
  spe_odi_order_item_id: Opt<number>;
  spe_create_time: GeneratedTimestamp;
}

export interface StoreAccountTokensTable {
  sat_usr_user_id: number;
  sat_token: string;
  sat_create_time: GeneratedTimestamp;
}

export interface PasskeysTable {
  pky_passkey_id: Generated<number>;
  pky_usr_user_id: number;
  pky_label: Nullable<string>;
  /** base64url of the raw credential id. */
  pky_credential_id: string;
  /** base64url of the COSE public key. */
  pky_public_key: string;
  pky_sign_count: Generated<number>;
  pky_prf_capable: Generated<boolean>;
  pky_transports: ColumnType<string[], string | undefined, string>;
  pky_aaguid: Nullable<string>;
  pky_backed_up: Generated<boolean>;
  pky_create_time: GeneratedTimestamp;
  pky_update_time: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  pky_last_used_time: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  pky_delete_time: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface PasskeyCeremoniesTable {
  pkc_passkey_ceremony_id: Generated<number>;
  pkc_wss_web_session_id: number;
  pkc_kind: 'login' | 'register' | 'stepup' | 'vault_setup' | 'vault_unlock' | 'vault_add' | 'vault_rotate';
  pkc_challenge: string;
  pkc_usr_user_id: Nullable<number>;
  pkc_create_time: GeneratedTimestamp;
  pkc_expires_time: Timestamp;
}

export interface UserEncryptionVaultsTable {
  uev_user_encryption_vault_id: Generated<number>;
  uev_usr_user_id: number;
  /** base64url of the raw X25519 public key. */
  uev_public_key: string;
  uev_key_generation: Generated<number>;
  uev_window_epoch: Generated<number>;
  uev_create_time: GeneratedTimestamp;
  uev_update_time: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export type VaultUnlockerType = 'passkey' | 'recovery' | 'passphrase';

export interface UserEncryptionWrappingsTable {
  uew_user_encryption_wrapping_id: Generated<number>;
  uew_uev_user_encryption_vault_id: number;
  uew_type: VaultUnlockerType;
  uew_wrapped_key: string;
  uew_salt: string;
  uew_generation: number;
  uew_pky_passkey_id: Nullable<number>;
  uew_used_time: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
  uew_create_time: GeneratedTimestamp;
  uew_delete_time: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
}

export interface VaultWindowsTable {
  uvw_key: string;
  uvw_value: string;
  uvw_expires_time: Timestamp;
}

export type DriveGrantRole = 'viewer' | 'editor';

/** The Drive's view of fil_files (DESIGN 9): the columns Drive and the upload purposes read and write. */
export interface FilesTable {
  fil_file_id: Generated<number>;
  fil_name: Opt<string>;
  fil_usr_user_id: Opt<number>;
  /** 'drive' for Drive files; the upload purpose's name for other uploads; null for other files. */
  fil_source: Opt<string>;
  /** Null: the owner's root. */
  fil_fol_folder_id: Opt<number>;
  fil_fbb_file_blob_id: Opt<number>;
  fil_size_bytes: Opt<number>;
  fil_mime_type: Opt<string>;
  fil_is_trashed: Generated<boolean>;
  fil_trash_time: OptTime;
  /** A sealed file's content key, sealed to its owner's vault (null: a plain file). */
  fil_sealed_key: Opt<string>;
  /** A sealed file's name, AES-256-GCM under its content key (fil_name is then null). */
  fil_sealed_name: Opt<string>;
  fil_sealed_mime: Opt<string>;
  fil_create_time: GeneratedTimestamp;
  fil_update_time: GeneratedTimestamp;
  fil_delete_time: OptTime;
}

export interface FileBlobsTable {
  fbb_file_blob_id: Generated<number>;
  fbb_sha256: string;
  fbb_size_bytes: number;
  fbb_mime_type: Opt<string>;
  fbb_driver: string;
  fbb_storage_key: string;
  fbb_refcount: Generated<number>;
  fbb_create_time: GeneratedTimestamp;
  fbb_update_time: GeneratedTimestamp;
}

export interface FoldersTable {
  fol_folder_id: Generated<number>;
  fol_usr_user_id: number;
  /** Null: a top-level folder. */
  fol_fol_folder_id_parent: Opt<number>;
  fol_name: Opt<string>;
  fol_is_trashed: Generated<boolean>;
  fol_trash_time: OptTime;
  /** Files in it (and in folders made inside it) are sealed under the owner's vault. */
  fol_is_sealed: Generated<boolean>;
  /** A sealed folder's name key sealed to the owner's vault (fol_folders:{id}:key); null for a plain folder. */
  fol_sealed_key: Opt<string>;
  /** A sealed folder's name under that key (fol_folders:{id}:name); fol_name is null then. */
  fol_sealed_name: Opt<string>;
  fol_create_time: GeneratedTimestamp;
  fol_update_time: GeneratedTimestamp;
  fol_delete_time: OptTime;
}

export interface FileVersionsTable {
  fvr_file_version_id: Generated<number>;
  fvr_fil_file_id: number;
  fvr_fbb_file_blob_id: number;
  fvr_name: Opt<string>;
  fvr_size_bytes: number;
  fvr_mime_type: Opt<string>;
  /** When this content became the file's current content. */
  fvr_content_time: Timestamp;
  fvr_create_time: GeneratedTimestamp;
}

export interface FileAccessGrantsTable {
  fga_file_access_grant_id: Generated<number>;
  fga_fil_file_id: Opt<number>;
  fga_fol_folder_id: Opt<number>;
  /** The grantee. */
  fga_usr_user_id: number;
  fga_role: DriveGrantRole;
  fga_create_time: GeneratedTimestamp;
  fga_update_time: GeneratedTimestamp;
  fga_delete_time: OptTime;
}

export interface FileShareLinksTable {
  fsl_file_share_link_id: Generated<number>;
  fsl_fil_file_id: number;
  fsl_usr_user_id: number;
  fsl_token_hash: string;
  fsl_password_hash: Opt<string>;
  fsl_expires_time: OptTime;
  fsl_revoked_time: OptTime;
  fsl_create_time: GeneratedTimestamp;
  fsl_update_time: GeneratedTimestamp;
  fsl_delete_time: OptTime;
}

export interface FileChangesTable {
  /** The sync cursor. */
  fch_file_change_id: Generated<number>;
  /** Whose feed the change is in: the owner of the file or folder. */
  fch_usr_user_id: number;
  fch_kind: string;
  fch_fil_file_id: Opt<number>;
  fch_fol_folder_id: Opt<number>;
  fch_create_time: GeneratedTimestamp;
}

export interface FileUploadsTable {
  fup_file_upload_id: Generated<number>;
  fup_token_hash: string;
  fup_purpose: string;
  /** The uploader. */
  fup_usr_user_id: number;
  fup_name: Opt<string>;
  /** Into a sealed folder: the name sealed to the owner's vault public key (fup_name is then null). */
  fup_sealed_name: Opt<string>;
  fup_mime_type: Opt<string>;
  /** Into a sealed folder: the MIME type sealed to the vault public key until completion (fup_mime_type null). */
  fup_sealed_mime: Opt<string>;
  fup_fol_folder_id: Opt<number>;
  /** Set when the upload is a new version of this file. */
  fup_fil_file_id: Opt<number>;
  fup_expected_bytes: number;
  fup_expected_sha256: Opt<string>;
  fup_received_bytes: Generated<number>;
  /** The server's SHA-256 of the bytes, recorded when the last byte arrives. */
  fup_received_sha256: Opt<string>;
  /** The part file's name in the upload directory. */
  fup_part_name: string;
  /** The chunk lease: `{node}.{boot}.{random}` of the process receiving a chunk (a node's earlier boot is dead). */
  fup_lease_token: Opt<string>;
  fup_lease_until: OptTime;
  /** Into a sealed folder: the upload's own X25519 public key (base64url); each chunk is sealed to it on receipt. */
  fup_seal_public_key: Opt<string>;
  /** The upload's secret key sealed to the owner's vault public key (`fup_file_uploads:{part name}:key`). */
  fup_sealed_key: Opt<string>;
  fup_create_time: GeneratedTimestamp;
  /** The last activity (init or an accepted chunk); idle uploads expire from here. */
  fup_update_time: GeneratedTimestamp;
}

/** Tables the hand-written services query. The generic CRUD engine works from model declarations. */
export interface DB {
  stg_settings: SettingsTable;
  usr_users: UsersTable;
  apk_api_keys: ApiKeysTable;
  rql_request_logs: RequestLogsTable;
  tsk_task_runs: TaskRunsTable;
  plg_plugins: PluginsTable;
  grp_groups: GroupsTable;
  grm_group_members: GroupMembersTable;
  sbt_subscription_tiers: SubscriptionTiersTable;
  cht_change_tracking: ChangeTrackingTable;
  aik_api_idempotency_keys: ApiIdempotencyKeysTable;
  act_activation_codes: ActivationCodesTable;
  mob_mail_outbox: MailOutboxTable;
  met_member_email_templates: MemberEmailTemplatesTable;
  mem_member_emails: MemberEmailsTable;
  obe_outbound_events: OutboundEventsTable;
  ppe_post_publication_events: PostPublicationEventsTable;
  whk_webhook_keys: WebhookKeysTable;
  whe_webhook_endpoints: WebhookEndpointsTable;
  whd_webhook_deliveries: WebhookDeliveriesTable;
  wha_webhook_attempts: WebhookAttemptsTable;
  wss_web_sessions: WebSessionsTable;
  wsb_web_session_bridges: WebSessionBridgesTable;
  dvl_device_links: DeviceLinksTable;
  pro_products: ProductsTable;
  ord_orders: OrdersTable;
  odi_order_items: OrderItemsTable;
  wbh_webhook_logs: WebhookLogsTable;
  sat_store_account_tokens: StoreAccountTokensTable;
  spe_store_pending_events: StorePendingEventsTable;
  sbp_subscription_payments: SubscriptionPaymentsTable;
  pky_passkeys: PasskeysTable;
  pkc_passkey_ceremonies: PasskeyCeremoniesTable;
  fil_files: FilesTable;
  fbb_file_blobs: FileBlobsTable;
  fol_folders: FoldersTable;
  fvr_file_versions: FileVersionsTable;
  fga_file_access_grants: FileAccessGrantsTable;
  fsl_file_share_links: FileShareLinksTable;
  fch_file_changes: FileChangesTable;
  fup_file_uploads: FileUploadsTable;
  uev_user_encryption_vaults: UserEncryptionVaultsTable;
  uew_user_encryption_wrappings: UserEncryptionWrappingsTable;
  uvw_vault_windows: VaultWindowsTable;
}
