import type { Clock } from '../lib/clock.js';
import type { Settings } from '../settings/store.js';
import { StripeCardProcessorClient, type CardProcessorClient } from './providers/card-processor.js';
import { GOOGLE_OIDC_CERTS_URL, PlayTokenSource, oidcCertificates } from './providers/google-auth.js';
import { RestWalletProviderClient, type WalletProviderClient } from './providers/wallet-provider.js';

/**
 * What the store reaches outside the process for. Every address is a setting (DESIGN 14, "Test
 * authorities"): the API bases, wallet_provider_cert_hosts, android_store_oidc_certs_url and
 * android_store_token_url, so a sandbox or a fake on 127.0.0.1 stands in by settings alone. App Store
 * chains name their own OCSP responder (a local test authority names its own), so they need no entry here.
 */
export interface StoreDeps {
  /** GETs a wallet-provider certificate (PEM); the URL is already checked to be on a trusted certificate host. */
  fetchWalletCertificate(url: string): Promise<string>;
  /** The OIDC signing certificates (key id to PEM) of Pub/Sub push bearer tokens, from android_store_oidc_certs_url. */
  googleOidcCertificates(settings: Settings): Promise<Record<string, string>>;
  /**
   * An OAuth access token for the Play Developer API (android_store_service_account, from
   * android_store_token_url); refresh: the API refused the last one, get a new one.
   */
  androidAccessToken(settings: Settings, opts?: { refresh?: boolean }): Promise<string>;
  cardProcessor(settings: Settings): CardProcessorClient;
  walletProvider(settings: Settings): WalletProviderClient;
}

export function defaultStoreDeps(clock: Clock): StoreDeps {
  const play = new PlayTokenSource();
  let wallet: { key: string; client: WalletProviderClient } | null = null;
  return {
    async fetchWalletCertificate(url) {
      const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(10_000) });
      if (!res.ok) throw new Error(`Certificate fetch failed (${res.status})`);
      return res.text();
    },
    googleOidcCertificates: (settings) => oidcCertificates(settings.string('android_store_oidc_certs_url') || GOOGLE_OIDC_CERTS_URL),
    androidAccessToken: (settings, opts) => play.token(settings, opts),
    cardProcessor: (settings) => StripeCardProcessorClient.fromSettings(settings),
    walletProvider(settings) {
      // One client per configuration, so its OAuth token is reused until it expires.
      const key = ['wallet_provider_api_base', 'wallet_provider_client_id', 'wallet_provider_client_secret'].map((n) => settings.string(n)).join('\n');
      if (wallet?.key !== key) wallet = { key, client: RestWalletProviderClient.fromSettings(settings, clock) };
      return wallet.client;
    },
  };
}
