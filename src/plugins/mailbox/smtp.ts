import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerAddress } from 'smtp-server';
import type { Services } from '../../services.js';
import { receiveRaw } from './inbound.js';
import { mailboxByAddress } from './mailboxes.js';

// The inbound SMTP receiver (DESIGN 11): off unless mailbox_smtp_port is set. It accepts mail for the
// addresses of live mailboxes (anyone else: 550) while the plugin is active (otherwise 421 at connect),
// and stores each message in every recipient's mailbox.

type SmtpError = Error & { responseCode?: number };
const smtpError = (code: number, message: string): SmtpError => Object.assign(new Error(message), { responseCode: code });

export interface SmtpReceiver {
  port: number;
  stop(): Promise<void>;
}

export type ReceiverServices = Pick<Services, 'db' | 'clock' | 'plugins' | 'settings'>;

export async function startSmtpReceiver(services: ReceiverServices, opts: { port: number; host: string; maxBytes: number }): Promise<SmtpReceiver> {
  const server = new SMTPServer({
    name: services.settings.string('mailbox_domain') || 'localhost',
    banner: 'Gatehouse mailbox receiver',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: opts.maxBytes,
    logger: false,
    onConnect(_session, callback) {
      callback(services.plugins.isActive('mailbox') ? null : smtpError(421, 'Mail service not available'));
    },
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      mailboxByAddress(services.db, address.address).then(
        (box) => callback(box ? null : smtpError(550, 'No such mailbox here')),
        () => callback(smtpError(451, 'Temporary failure; try again later')),
      );
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', (e) => callback(e));
      stream.on('end', () => {
        if ((stream as unknown as { sizeExceeded?: boolean }).sizeExceeded) {
          callback(smtpError(552, 'Message too large'));
          return;
        }
        const raw = Buffer.concat(chunks);
        const peer = `from ${session.remoteAddress} (${session.clientHostname || 'unknown'})`;
        const deliverAll = services.db.transaction().execute(async (trx) => {
          for (const rcpt of session.envelope.rcptTo) {
            const box = await mailboxByAddress(trx, rcpt.address);
            if (box) await receiveRaw(trx, box, raw, { via: 'smtp', detail: peer }, services.clock.now());
          }
        });
        deliverAll.then(
          () => callback(null),
          () => callback(smtpError(451, 'Temporary failure; try again later')),
        );
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', () => {});
  const port = (server.server.address() as AddressInfo).port;
  return { port, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The plugin's start hook: the receiver when mailbox_smtp_port is set, else nothing. */
export async function startMailboxListeners(services: Services): Promise<() => Promise<void>> {
  const port = services.settings.int('mailbox_smtp_port');
  if (port <= 0) return async () => {};
  const receiver = await startSmtpReceiver(services, {
    port,
    host: services.settings.string('mailbox_smtp_host'),
    maxBytes: services.settings.int('mailbox_smtp_max_message_bytes'),
  });
  return receiver.stop;
}
