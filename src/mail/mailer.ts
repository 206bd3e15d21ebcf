import type { Kysely } from 'kysely';
import type { Transporter } from 'nodemailer';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import type { Settings } from '../settings/store.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  /** An HTML alternative of the text (member emails); sent as multipart/alternative and kept in the outbox. */
  html?: string;
  /** A short name of what kind of mail this is (password_reset, welcome); kept with outbox rows. */
  template?: string;
  /** The sender address when not the service's mail_from_address (a member's mailbox). */
  from?: string;
  /** Files sent with the message (SMTP only; the outbox keeps the text and headers). */
  attachments?: Array<{ filename: string; contentType: string; content: Buffer }>;
  /** Message-ID and threading headers of a member's mail. */
  messageId?: string;
  inReplyTo?: string;
}

/** The one way outgoing mail leaves the service. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** Used while no SMTP server is configured: the message is kept in mob_mail_outbox (tests read it there). */
export class OutboxMailer implements Mailer {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly clock: Clock,
    private readonly from: string,
  ) {}

  async send(message: MailMessage): Promise<void> {
    await this.db
      .insertInto('mob_mail_outbox')
      .values({
        mob_to: message.to,
        mob_from: message.from ?? this.from,
        mob_subject: message.subject,
        mob_text: message.text,
        mob_html: message.html ?? null,
        mob_template: message.template ?? null,
        mob_create_time: this.clock.now(),
      })
      .execute();
  }
}

export interface SmtpOptions {
  host: string;
  port: number;
  user: string;
  password: string;
  from: string;
  /** The display name of the From header (setting site_name); the envelope sender is `from` alone. */
  fromName?: string;
  /** TLS from the first byte (smtps:// or port 465); otherwise STARTTLS when offered. */
  secure: boolean;
}

/**
 * Reads `smtp_url` (smtp://user:pass@host:587, smtps://user:pass@host:465; user and password
 * percent-encoded). Null when it is not a usable SMTP URL.
 */
export function parseSmtpUrl(value: string): Omit<SmtpOptions, 'from'> | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if ((url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || url.hostname === '') return null;
  const secure = url.protocol === 'smtps:';
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    secure,
  };
}

export class SmtpMailer implements Mailer {
  /** Made at the first message: nodemailer is loaded then, not at start. */
  private transporter: Promise<Transporter> | undefined;

  constructor(private readonly options: SmtpOptions) {}

  private transport(): Promise<Transporter> {
    const o = this.options;
    this.transporter ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        host: o.host,
        port: o.port,
        // Port 465 speaks TLS from the first byte; other ports upgrade with STARTTLS when offered.
        secure: o.secure,
        ...(o.user ? { auth: { user: o.user, pass: o.password } } : {}),
      }),
    );
    return this.transporter;
  }

  async send(message: MailMessage): Promise<void> {
    await (await this.transport()).sendMail({
      from: message.from ?? (this.options.fromName ? { name: this.options.fromName, address: this.options.from } : this.options.from),
      to: message.to,
      subject: message.subject,
      text: message.text,
      ...(message.html !== undefined ? { html: message.html } : {}),
      ...(message.attachments ? { attachments: message.attachments } : {}),
      ...(message.messageId ? { messageId: message.messageId } : {}),
      ...(message.inReplyTo ? { inReplyTo: message.inReplyTo, references: message.inReplyTo } : {}),
    });
  }

  sameAs(o: SmtpOptions): boolean {
    const a = this.options;
    return a.host === o.host && a.port === o.port && a.user === o.user && a.password === o.password && a.from === o.from && a.fromName === o.fromName && a.secure === o.secure;
  }
}

let cachedSmtp: SmtpMailer | undefined;

/**
 * The SMTP server the settings name: `smtp_url` when set, else `smtp_host` & co; null keeps mail in the
 * outbox. Mail is from mail_from_address, shown under the site's name (site_name).
 */
export function smtpOptionsFromSettings(settings: Settings): SmtpOptions | null {
  const from = settings.string('mail_from_address');
  const fromName = settings.string('site_name');
  const url = settings.string('smtp_url');
  if (url !== '') {
    const parsed = parseSmtpUrl(url);
    return parsed ? { ...parsed, from, fromName } : null;
  }
  const host = settings.string('smtp_host');
  if (host === '') return null;
  const port = settings.int('smtp_port');
  return { host, port, user: settings.string('smtp_user'), password: settings.string('smtp_password'), from, fromName, secure: port === 465 };
}

/** SMTP when smtp_url (or smtp_host) is set, else the outbox; read at send time so a settings change applies at once. */
export function mailerFromSettings(settings: Settings, db: Kysely<DB>, clock: Clock): Mailer {
  const options = smtpOptionsFromSettings(settings);
  if (!options) return new OutboxMailer(db, clock, settings.string('mail_from_address'));
  if (!cachedSmtp?.sameAs(options)) cachedSmtp = new SmtpMailer(options);
  return cachedSmtp;
}
