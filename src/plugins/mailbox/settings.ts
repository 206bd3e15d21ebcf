import type { SettingDefinition } from '../../settings/definitions.js';

/** The mailbox plugin's settings (DESIGN 11). */
export const mailboxSettings: SettingDefinition[] = [
  { name: 'mailbox_domain', type: 'string', default: 'localhost', maxLength: 253, description: 'Domain of members\' default mailbox addresses ({user id}@{mailbox_domain})' },
  { name: 'mailbox_smtp_port', type: 'integer', default: 0, min: 0, max: 65535, description: 'Port of the inbound SMTP receiver; 0 keeps it off' },
  { name: 'mailbox_smtp_host', type: 'string', default: '127.0.0.1', maxLength: 255, description: 'Address the inbound SMTP receiver listens on' },
  { name: 'mailbox_smtp_max_message_bytes', type: 'integer', default: 30 * 1024 * 1024, min: 1024, max: 1024 * 1024 * 1024, description: 'Largest message the SMTP receiver accepts, bytes (advertised as SIZE; a larger declared SIZE is refused at MAIL FROM, a larger message with 552 and never held in memory)' },
  { name: 'mailbox_smtp_max_buffered_bytes', type: 'integer', default: 256 * 1024 * 1024, min: 1024, max: 64 * 1024 * 1024 * 1024, description: 'Bytes of all messages being received at once that the SMTP receiver holds in memory; a message that would go past it is answered 452 (try again later)' },
  { name: 'mailbox_smtp_max_clients', type: 'integer', default: 100, min: 1, max: 100_000, description: 'Connections the SMTP receiver holds at once; more are answered 421' },
  { name: 'mailbox_smtp_max_clients_per_ip', type: 'integer', default: 10, min: 1, max: 100_000, description: 'Connections the SMTP receiver holds at once from one client address; more are answered 421' },
  { name: 'mailbox_smtp_max_recipients', type: 'integer', default: 50, min: 1, max: 10_000, description: 'Recipients of one message the SMTP receiver takes; more RCPT TO are answered 452' },
  { name: 'mailbox_smtp_rate_limit_messages', type: 'integer', default: 120, min: 1, max: Number.MAX_SAFE_INTEGER, description: 'Messages (MAIL FROM) one client address may start per window at the SMTP receiver; more are answered 450' },
  { name: 'mailbox_smtp_rate_limit_window', type: 'integer', default: 3600, min: 1, max: Number.MAX_SAFE_INTEGER, description: 'The SMTP receiver\'s per-client message window, seconds' },
];
