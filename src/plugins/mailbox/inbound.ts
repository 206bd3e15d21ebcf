import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AddressObject } from 'mailparser';
import type { DB } from '../../db/types.js';
import type { Mailbox } from './mailboxes.js';
import { deliver, type Delivered, type NewMessage } from './messages.js';

// One inbound message (from the SMTP receiver or an mbox import), parsed with mailparser and stored in a
// mailbox: idempotent per Message-ID (a message without one gets a Message-ID from its SHA-256, so a
// re-import is idempotent too).

function addressText(a: AddressObject | AddressObject[] | undefined): string {
  if (!a) return '';
  return (Array.isArray(a) ? a : [a]).map((x) => x.text).join(', ');
}

function headerList(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]).map((v) => String(v).replace(/\s+/g, ' ').trim());
}

export interface InboundSource {
  /** What delivered it: 'smtp' or 'import'. */
  via: 'smtp' | 'import';
  /** The delivering peer (SMTP) or the archive (import), for the timeline. */
  detail: string;
}

/**
 * Parses one raw message into what deliver() stores, independent of the mailbox it goes to: the SMTP
 * receiver parses a message once and delivers the result to every recipient.
 */
export async function parseInbound(raw: Buffer, source: InboundSource, now: Date): Promise<NewMessage> {
  // mailparser is loaded at the first message, not with the plugin (about 0.4 s with its dependencies).
  const { simpleParser } = await import('mailparser');
  const parsed = await simpleParser(raw, { skipHtmlToText: false, skipTextToHtml: true, skipImageLinks: true });
  const messageId = parsed.messageId?.trim() || `<${createHash('sha256').update(raw).digest('hex')}@${source.via}.invalid>`;
  const references = Array.isArray(parsed.references) ? parsed.references : parsed.references ? [parsed.references] : [];
  const time = parsed.date && !Number.isNaN(parsed.date.getTime()) ? parsed.date : now;
  return {
    direction: 'inbound',
    messageIdHeader: messageId.slice(0, 998),
    inReplyTo: parsed.inReplyTo?.trim().slice(0, 998) || null,
    references: references.map((r) => r.trim()).filter(Boolean),
    sender: addressText(parsed.from),
    recipients: addressText(parsed.to),
    subject: parsed.subject ?? '',
    body: parsed.text ?? '',
    hops: headerList(parsed.headers.get('received')),
    sizeBytes: raw.length,
    attachmentCount: parsed.attachments.length,
    time: source.via === 'import' ? time : now,
    event: {
      kind: 'received',
      title: source.via === 'smtp' ? 'Received by SMTP' : 'Imported',
      detail: source.detail,
      meta: { via: source.via },
    },
  };
}

/** Parses one raw message and stores it in a mailbox (the mbox import, one message at a time). */
export async function receiveRaw(db: Kysely<DB>, box: Mailbox, raw: Buffer, source: InboundSource, now: Date): Promise<Delivered> {
  return deliver(db, box, await parseInbound(raw, source, now));
}
