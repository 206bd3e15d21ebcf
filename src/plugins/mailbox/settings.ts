import type { SettingDefinition } from '../../settings/definitions.js';

/** The mailbox plugin's settings (DESIGN 11). */
export const mailboxSettings: SettingDefinition[] = [
  { name: 'mailbox_domain', type: 'string', default: 'localhost', maxLength: 253, description: 'Domain of members\' default mailbox addresses ({user id}@{mailbox_domain})' },
  { name: 'mailbox_smtp_port', type: 'integer', default: 0, min: 0, max: 65535, description: 'Port of the inbound SMTP receiver; 0 keeps it off' },
  { name: 'mailbox_smtp_host', type: 'string', default: '127.0.0.1', maxLength: 255, description: 'Address the inbound SMTP receiver listens on' },
  { name: 'mailbox_smtp_max_message_bytes', type: 'integer', default: 30 * 1024 * 1024, min: 1024, max: 1024 * 1024 * 1024, description: 'Largest message the SMTP receiver accepts, bytes' },
];
