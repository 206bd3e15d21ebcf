import { GoogleAuth, OAuth2Client } from 'google-auth-library';
import type { Clock } from '../lib/clock.js';
import type { Settings } from '../settings/store.js';
import { StripeCardProcessorClient, type CardProcessorClient } from './providers/card-processor.js';
import { RestWalletProviderClient, type WalletProviderClient } from './providers/wallet-provider.js';

/**
 * What the store reaches outside the process for. Each has a production default; tests replace the
 * ones whose address cannot be configured (Google's OIDC certificates and token endpoint, the wallet
 * provider's certificate host) with fakes on 127.0.0.1.
 */
export interface StoreDeps {
  /** GETs a wallet-provider certificate (PEM); the URL is already checked to be on the provider's domain. */
  fetchWalletCertificate(url: string): Promise<string>;
  /** Google's OIDC signing certificates (key id to PEM), for Pub/Sub push bearer tokens. */
  googleOidcCertificates(): Promise<Record<string, string>>;
  /** An OAuth access token for the Play Developer API (android_store_service_account). */
  androidAccessToken(settings: Settings): Promise<string>;
  cardProcessor(settings: Settings): CardProcessorClient;
  walletProvider(settings: Settings): WalletProviderClient;
  /** App Store chains: OCSP revocation checks and validity at the current date (true in production). */
  iosOnlineChecks: boolean;
}

export function defaultStoreDeps(clock: Clock): StoreDeps {
  const oauth = new OAuth2Client();
  let wallet: { key: string; client: WalletProviderClient } | null = null;
  return {
    async fetchWalletCertificate(url) {
      const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(10_000) });
      if (!res.ok) throw new Error(`Certificate fetch failed (${res.status})`);
      return res.text();
    },
    async googleOidcCertificates() {
      const { certs } = await oauth.getFederatedSignonCertsAsync();
      return certs as Record<string, string>;
    },
    async androidAccessToken(settings) {
      const raw = settings.string('android_store_service_account');
      if (!raw) throw new Error('android_store_service_account is not set');
      const auth = new GoogleAuth({ credentials: JSON.parse(raw) as Record<string, string>, scopes: ['https://www.googleapis.com/auth/androidpublisher'] });
      const token = await auth.getAccessToken();
      if (!token) throw new Error('No access token for the Play Developer API');
      return token;
    },
    iosOnlineChecks: true,
    cardProcessor: (settings) => StripeCardProcessorClient.fromSettings(settings),
    walletProvider(settings) {
      // One client per configuration, so its OAuth token is reused until it expires.
      const key = ['wallet_provider_api_base', 'wallet_provider_client_id', 'wallet_provider_client_secret'].map((n) => settings.string(n)).join('\n');
      if (wallet?.key !== key) wallet = { key, client: RestWalletProviderClient.fromSettings(settings, clock) };
      return wallet.client;
    },
  };
}
