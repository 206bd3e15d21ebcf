import { createHmac } from 'node:crypto';
import { secretKeyBytes } from './secrets.js';

/** One Standard Webhooks 1.0 signature: `v1,` and base64 of HMAC-SHA256 over `{id}.{timestamp}.{body}`. */
export function signPayload(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretKeyBytes(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of a delivery; every secret given signs (the new and the old one during a rotation's overlap). */
export function webhookHeaders(secrets: string[], id: string, timestampSeconds: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => signPayload(s, id, timestampSeconds, body)).join(' '),
  };
}
