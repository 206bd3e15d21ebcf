import { describe, expect, it } from 'vitest';
import { isProviderCertificateUrl } from '../../src/store/webhooks/wallet-provider.js';

describe('wallet_provider_cert_hosts: which certificate URLs are trusted', () => {
  it('by default, HTTPS on the provider domain and its subdomains, default port only', () => {
    expect(isProviderCertificateUrl('https://api.paypal.com/v1/notifications/certs/CERT-1')).toBe(true);
    expect(isProviderCertificateUrl('https://api.sandbox.paypal.com/v1/notifications/certs/CERT-1', '')).toBe(true);
    for (const url of ['http://api.paypal.com/c', 'https://api.paypal.com:8443/c', 'https://api.paypal.com.evil.net/c', 'https://evilpaypal.com/c', 'https://user@api.paypal.com/c', 'not a url']) {
      expect(isProviderCertificateUrl(url), url).toBe(false);
    }
  });

  it('an origin entry trusts exactly that origin (a local fake over plain HTTP), and nothing else', () => {
    const hosts = 'paypal.com, http://127.0.0.1:8089';
    expect(isProviderCertificateUrl('http://127.0.0.1:8089/v1/notifications/certs/CERT-1', hosts)).toBe(true);
    expect(isProviderCertificateUrl('https://api.paypal.com/c', hosts)).toBe(true);
    expect(isProviderCertificateUrl('http://127.0.0.1:8090/c', hosts)).toBe(false);
    expect(isProviderCertificateUrl('https://127.0.0.1:8089/c', hosts)).toBe(false);
    expect(isProviderCertificateUrl('http://127.0.0.1:8089/c', 'http://127.0.0.1:8089')).toBe(true);
    expect(isProviderCertificateUrl('https://api.paypal.com/c', 'http://127.0.0.1:8089')).toBe(false);
  });
});
