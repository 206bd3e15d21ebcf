import type { SettingDefinition } from '../../../settings/definitions.js';

export const relaySettings: SettingDefinition[] = [
  { name: 'api_relay_rate_limit_requests', type: 'integer', default: 300, min: 1, max: Number.MAX_SAFE_INTEGER, description: 'Relay channel requests (/relay/*) per window per IP' },
  { name: 'api_relay_rate_limit_window', type: 'integer', default: 3600, min: 1, max: Number.MAX_SAFE_INTEGER, description: 'Relay channel window, seconds' },
  { name: 'mailbox_relay_run_token_hours', type: 'integer', default: 24, min: 1, max: 24 * 30, description: 'How long a relay run token stays live after `gatehouse relay run create` (it is spent by the birth report)' },
  { name: 'mailbox_relay_ping_port', type: 'integer', default: 443, min: 1, max: 65535, description: 'TCP port of the pinned TLS ping to a newly born relay' },
];
