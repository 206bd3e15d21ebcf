import type { Kysely } from 'kysely';
import nodemailer, { type Transporter } from 'nodemailer';
import type { DB } from '../db/types.js';
import type { Clock } from '../lib/clock.js';
import type { Settings } from '../settings/store.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
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

/** Used while no SMTP host is configured: the message is kept in mob_mail_outbox (tests read it there). */
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
}

export class SmtpMailer implements Mailer {
  private readonly transporter: Transporter;

  constructor(private readonly options: SmtpOptions) {
    this.transporter = nodemailer.createTransport({
      host: options.host,
      port: options.port,
      // Port 465 speaks TLS from the first byte; other ports upgrade with STARTTLS when offered.
      secure: options.port === 465,
      ...(options.user ? { auth: { user: options.user, pass: options.password } } : {}),
    });
  }

  async send(message: MailMessage): Promise<void> {
    await this.transporter.sendMail({
      from: message.from ?? this.options.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      ...(message.attachments ? { attachments: message.attachments } : {}),
      ...(message.messageId ? { messageId: message.messageId } : {}),
      ...(message.inReplyTo ? { inReplyTo: message.inReplyTo, references: message.inReplyTo } : {}),
    });
  }

  sameAs(o: SmtpOptions): boolean {
    const a = this.options;
    return a.host === o.host && a.port === o.port && a.user === o.user && a.password === o.password && a.from === o.from;
  }
}

let cachedSmtp: SmtpMailer | undefined;

/** SMTP when smtp_host is set, else the outbox; read at send time so a settings change applies at once. */
export function mailerFromSettings(settings: Settings, db: Kysely<DB>, clock: Clock): Mailer {
  const from = settings.string('mail_from_address');
  const host = settings.string('smtp_host');
  if (host === '') return new OutboxMailer(db, clock, from);
  const options: SmtpOptions = { host, port: settings.int('smtp_port'), user: settings.string('smtp_user'), password: settings.string('smtp_password'), from };
  if (!cachedSmtp?.sameAs(options)) cachedSmtp = new SmtpMailer(options);
  return cachedSmtp;
}
