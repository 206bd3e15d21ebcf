import type { Settings } from './store.js';

type Read = Pick<Settings, 'string'>;

/** The contract's four billing sources (the same names as odi_payment_source). */
export type BillingSourceName = 'card_processor' | 'wallet_provider' | 'ios_store' | 'android_store';

/** One thing a source cannot work without: what to check, and what to say when it is missing. */
interface Requirement {
  /** The setting an operator fixes it with. */
  setting: string;
  /** Null when the requirement is met, else what is missing, in a few words. */
  missing(s: Read): string | null;
}

export interface BillingSourceSpec {
  source: BillingSourceName;
  label: string;
  /** Every setting the source's code reads, in the order a form shows them. */
  settings: readonly string[];
  requirements: readonly Requirement[];
}

const needs = (setting: string, words: string): Requirement => ({ setting, missing: (s) => (s.string(setting).trim() === '' ? words : null) });

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

function serviceAccountProblem(raw: string): string | null {
  if (raw.trim() === '') return 'service account JSON not set (the Play Developer API reads each purchase with it)';
  try {
    const sa = JSON.parse(raw) as { client_email?: unknown; private_key?: unknown };
    if (typeof sa.client_email !== 'string' || typeof sa.private_key !== 'string') return 'service account JSON has no client_email or private_key';
    return null;
  } catch {
    return 'service account is not JSON';
  }
}

/**
 * What each source's code reads and what it cannot work without (checkout, webhook verification, and the
 * provider API the webhook handling calls). Every one of them is a setting: no billing source reads the
 * environment.
 */
export const BILLING_SOURCE_SPECS: readonly BillingSourceSpec[] = [
  {
    source: 'card_processor',
    label: 'Card processor (Stripe)',
    settings: ['card_processor_api_key', 'card_processor_webhook_secret', 'card_processor_api_base'],
    requirements: [
      needs('card_processor_api_key', 'API key not set (checkout cannot start without it)'),
      needs('card_processor_webhook_secret', 'webhook signing secret not set (payments cannot be recorded without it)'),
    ],
  },
  {
    source: 'wallet_provider',
    label: 'Wallet provider (PayPal)',
    settings: ['wallet_provider_webhook_id', 'wallet_provider_client_id', 'wallet_provider_client_secret', 'wallet_provider_api_base', 'wallet_provider_cert_hosts'],
    requirements: [
      needs('wallet_provider_webhook_id', 'webhook id not set (notifications cannot be verified without it)'),
      needs('wallet_provider_client_id', 'client id not set'),
      needs('wallet_provider_client_secret', 'client secret not set'),
      needs('wallet_provider_api_base', 'API base URL not set (e.g. https://api-m.paypal.com)'),
    ],
  },
  {
    source: 'ios_store',
    label: 'iOS App Store',
    settings: [
      'ios_store_bundle_id',
      'ios_store_environment',
      'ios_store_app_apple_id',
      'ios_store_root_certificates',
      'ios_store_api_key_id',
      'ios_store_api_issuer_id',
      'ios_store_api_private_key',
      'ios_store_api_base',
    ],
    requirements: [
      needs('ios_store_bundle_id', 'bundle id not set'),
      {
        setting: 'ios_store_root_certificates',
        missing: (s) => (PEM_CERTIFICATE.test(s.string('ios_store_root_certificates')) ? null : 'Apple root certificates not set (notifications cannot be verified without them)'),
      },
      {
        setting: 'ios_store_environment',
        missing: (s) => {
          const env = s.string('ios_store_environment');
          return env === 'Production' || env === 'Sandbox' ? null : `environment ${env} sends unsigned notifications, which are refused (choose Production or Sandbox)`;
        },
      },
      {
        setting: 'ios_store_app_apple_id',
        missing: (s) =>
          s.string('ios_store_environment') === 'Production' && !(Number(s.string('ios_store_app_apple_id')) > 0) ? 'App Apple ID not set (the Production environment needs it)' : null,
      },
    ],
  },
  {
    source: 'android_store',
    label: 'Android Google Play',
    settings: [
      'android_store_package_name',
      'android_store_push_audience',
      'android_store_push_email',
      'android_store_service_account',
      'android_store_api_base',
      'android_store_oidc_certs_url',
      'android_store_token_url',
    ],
    requirements: [
      needs('android_store_package_name', 'package name not set'),
      needs('android_store_push_audience', 'push audience not set (notifications cannot be verified without it)'),
      needs('android_store_push_email', 'push service account email not set (notifications cannot be verified without it)'),
      { setting: 'android_store_service_account', missing: (s) => serviceAccountProblem(s.string('android_store_service_account')) },
    ],
  },
];

export interface BillingSourceStatus {
  source: BillingSourceName;
  label: string;
  configured: boolean;
  /** What is missing, one phrase per requirement not met (empty when configured). */
  missing: string[];
}

/** Each source: configured only when every requirement is met, with what is missing. */
export function billingSourceStatuses(settings: Read): BillingSourceStatus[] {
  return BILLING_SOURCE_SPECS.map((spec) => {
    const missing = spec.requirements.map((r) => r.missing(settings)).filter((m): m is string => m !== null);
    return { source: spec.source, label: spec.label, configured: missing.length === 0, missing };
  });
}

export function billingSourceConfigured(settings: Read, source: BillingSourceName): boolean {
  return billingSourceStatuses(settings).some((s) => s.source === source && s.configured);
}

/** The store's switches are on (products_active and subscriptions_active); open also needs a configured source. */
export function storeSwitchesOn(settings: Pick<Settings, 'bool'>): boolean {
  return settings.bool('products_active') && settings.bool('subscriptions_active');
}
