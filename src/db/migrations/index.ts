import type { Migration } from 'kysely';
import * as foundation from './0001_foundation.js';
import * as coreModels from './0002_core_models.js';
import * as tiers from './0003_tiers.js';
import * as actions from './0004_actions.js';
import * as tierProductLink from './0005_tier_product_link.js';
import * as webSessions from './0006_web_sessions.js';
import * as appLinks from './0007_app_links.js';
import * as store from './0008_store.js';
import * as events from './0009_events.js';
import * as subscriptionLifecycle from './0010_subscription_lifecycle.js';
import * as deviceLinkSealedKey from './0011_device_link_sealed_key.js';
import * as requestLogBrin from './0012_request_log_brin.js';
import * as principalChangeNotify from './0013_principal_change_notify.js';
import * as storeEventOrder from './0014_store_event_order.js';
import * as passkeys from './0020_passkeys.js';
import * as drive from './0019_drive.js';
import * as vault from './0025_vault.js';
import * as vaultCeremonies from './0026_vault_ceremonies.js';
import * as driveSealed from './0027_drive_sealed.js';
import * as rowChangeNotify from './0028_row_change_notify.js';
import * as vaultDestroyRetiredWraps from './0029_vault_destroy_retired_wraps.js';
import * as uploadSealing from './0033_upload_sealing.js';
import * as sealedFolderNames from './0032_sealed_folder_names.js';
import * as billingFlows from './0034_billing_flows.js';
import * as billingIssueStates from './0035_billing_issue_states.js';
import * as outboundEvents from './0036_outbound_events.js';
import * as postPublicationEvents from './0037_post_publication_events.js';
import * as webhookDelivery from './0038_webhook_delivery.js';
import * as memberEmails from './0039_member_emails.js';
import * as memberImportJobs from './0040_member_import_jobs.js';
import * as ghostImports from './0041_ghost_imports.js';
import * as contentFeatureImages from './0042_content_feature_images.js';
import * as rowChangeNotifyStaticKeys from './0043_row_change_notify_static_keys.js';

/** Every migration, in order. Names sort in the order they apply. */
export const migrations: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_core_models': coreModels,
  '0003_tiers': tiers,
  '0004_actions': actions,
  '0005_tier_product_link': tierProductLink,
  '0006_web_sessions': webSessions,
  '0007_app_links': appLinks,
  '0008_store': store,
  '0009_events': events,
  '0010_subscription_lifecycle': subscriptionLifecycle,
  '0011_device_link_sealed_key': deviceLinkSealedKey,
  '0012_request_log_brin': requestLogBrin,
  '0013_principal_change_notify': principalChangeNotify,
  '0014_store_event_order': storeEventOrder,
  '0020_passkeys': passkeys,
  '0019_drive': drive,
  '0025_vault': vault,
  '0026_vault_ceremonies': vaultCeremonies,
  '0027_drive_sealed': driveSealed,
  '0028_row_change_notify': rowChangeNotify,
  '0029_vault_destroy_retired_wraps': vaultDestroyRetiredWraps,
  '0032_sealed_folder_names': sealedFolderNames,
  '0033_upload_sealing': uploadSealing,
  '0034_billing_flows': billingFlows,
  '0035_billing_issue_states': billingIssueStates,
  '0036_outbound_events': outboundEvents,
  '0037_post_publication_events': postPublicationEvents,
  '0038_webhook_delivery': webhookDelivery,
  '0039_member_emails': memberEmails,
  '0040_member_import_jobs': memberImportJobs,
  '0041_ghost_imports': ghostImports,
  '0042_content_feature_images': contentFeatureImages,
  '0043_row_change_notify_static_keys': rowChangeNotifyStaticKeys,
};
