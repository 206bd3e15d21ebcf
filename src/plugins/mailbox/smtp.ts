import type { AddressInfo } from 'node:net';
import type { SMTPServerAddress, SMTPServerDataStream, SMTPServerOptions, SMTPServerSession } from 'smtp-server';
import { ApiError } from '../../http/errors.js';
import { RateLimitBucket, settingsLimits } from '../../http/rate-limit/bucket.js';
import type { Services } from '../../services.js';
import { parseInbound } from './inbound.js';
import { mailboxByAddress } from './mailboxes.js';
import { deliver } from './messages.js';

// The inbound SMTP receiver (DESIGN 11): off unless mailbox_smtp_port is set. It accepts mail for the
// addresses of live mailboxes (anyone else: 550) while the plugin is active (otherwise 421 at connect),
// and stores each message in every recipient's mailbox.
//
// Anyone who can reach the port can talk to it, so everything it holds is bounded by settings read at
// each connection (mailbox_smtp_*): the SIZE it advertises (a larger declared SIZE is refused at MAIL
// FROM; a message that outgrows it during DATA is no longer buffered, the rest is read and dropped, and
// the answer is 552), the bytes all messages being received hold together (past them a message is
// answered 452, to be retried), connections at once (in all and per client address: 421), recipients
// per message (452) and messages per client address per window (450 at MAIL FROM). A message is parsed
// once, before any database work, and stored with one short transaction per recipient mailbox, so a
// large message to many mailboxes never holds the database for the parse (the embedded database has
// one connection: a long transaction stalls every request).

type SmtpError = Error & { responseCode?: number };
const smtpError = (code: number, message: string): SmtpError => Object.assign(new Error(message), { responseCode: code });
const TRY_LATER = 'Temporary failure; try again later';

export interface SmtpReceiver {
  port: number;
  /** Connections open at this moment. */
  openConnections(): number;
  /** Bytes of messages being received that are held in memory now. */
  bufferedBytes(): number;
  stop(): Promise<void>;
}

export type ReceiverServices = Pick<Services, 'db' | 'clock' | 'plugins' | 'settings' | 'rateLimitStore'>;

export interface ReceiverOptions {
  port: number;
  host: string;
  /** Parses a received message (once per message, whatever the number of recipients); tests count the calls. */
  parse?: typeof parseInbound;
}

/** The receiver's limits of this moment, from the settings. */
function limitsNow(settings: ReceiverServices['settings']) {
  return {
    size: settings.int('mailbox_smtp_max_message_bytes'),
    maxClients: settings.int('mailbox_smtp_max_clients'),
    maxRecipients: settings.int('mailbox_smtp_max_recipients'),
  };
}

export async function startSmtpReceiver(services: ReceiverServices, opts: ReceiverOptions): Promise<SmtpReceiver> {
  const { db, clock, settings } = services;
  const parse = opts.parse ?? parseInbound;
  /** Bytes of messages being received, held in memory now (bounded by mailbox_smtp_max_buffered_bytes). */
  let buffered = 0;
  const messages = new RateLimitBucket('smtp_messages', services.rateLimitStore, clock, settingsLimits(settings, 'mailbox_smtp_rate_limit_messages', 'mailbox_smtp_rate_limit_window'));

  /** Parses once, then stores the message in each recipient's mailbox, one short transaction each. */
  async function receive(raw: Buffer, session: SMTPServerSession): Promise<void> {
    const peer = `from ${session.remoteAddress} (${session.clientHostname || 'unknown'})`;
    const message = await parse(raw, { via: 'smtp', detail: peer }, clock.now());
    const done = new Set<number>();
    for (const rcpt of session.envelope.rcptTo) {
      // Delivery is idempotent per Message-ID: after a failure part-way the sender's retry stores the rest.
      await db.transaction().execute(async (trx) => {
        const box = await mailboxByAddress(trx, rcpt.address);
        if (!box || done.has(box.id)) return;
        done.add(box.id);
        await deliver(trx, box, message);
      });
    }
  }

  // smtp-server keeps and reads this very object (its options are "used and modified in place"), so the
  // limits are refreshed from the settings for each accepted socket, before the server looks at it.
  const options: SMTPServerOptions = {
    name: settings.string('mailbox_domain') || 'localhost',
    banner: 'Gatehouse mailbox receiver',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    ...limitsNow(settings),
    // 552 for a message over `size` whatever onData answers.
    rejectOversized: true,
    logger: false,
    onConnect(session, callback) {
      if (!services.plugins.isActive('mailbox')) return callback(smtpError(421, 'Mail service not available'));
      const perAddress = settings.int('mailbox_smtp_max_clients_per_ip');
      let open = 0;
      for (const c of server.connections) if (c.remoteAddress === session.remoteAddress) open++;
      if (open > perAddress) return callback(smtpError(421, 'Too many connections from your address; try again later'));
      callback();
    },
    onMailFrom(_address, session, callback) {
      messages.consume(session.remoteAddress).then(
        () => callback(),
        (e: unknown) => callback(e instanceof ApiError && e.status === 429 ? smtpError(450, 'Too many messages from your address; try again later') : smtpError(451, TRY_LATER)),
      );
    },
    onRcptTo(address: SMTPServerAddress, _session, callback) {
      mailboxByAddress(db, address.address).then(
        (box) => callback(box ? null : smtpError(550, 'No such mailbox here')),
        () => callback(smtpError(451, TRY_LATER)),
      );
    },
    onData(stream: SMTPServerDataStream, session, callback) {
      // Bytes are held only while the message is within the limit, and while all messages being received
      // together stay within mailbox_smtp_max_buffered_bytes; past either the rest is read and dropped.
      const limit = Number(options.size) || Infinity;
      const budget = settings.int('mailbox_smtp_max_buffered_bytes');
      let chunks: Buffer[] = [];
      let held = 0;
      let refusal: SmtpError | null = null;
      let answered = false;
      const release = () => {
        buffered -= held;
        held = 0;
        chunks = [];
      };
      const answer = (err: SmtpError | null) => {
        release();
        if (answered) return;
        answered = true;
        callback(err);
      };
      stream.on('data', (c: Buffer) => {
        if (refusal) return;
        if (stream.sizeExceeded || held + c.length > limit) refusal = smtpError(552, `Message exceeds the maximum size of ${limit} bytes`);
        else if (buffered + c.length > budget) refusal = smtpError(452, 'Insufficient system storage; try again later');
        if (refusal) return release();
        chunks.push(c);
        held += c.length;
        buffered += c.length;
      });
      stream.on('error', (e) => answer(e));
      stream.on('end', () => {
        if (stream.sizeExceeded) refusal = smtpError(552, `Message exceeds the maximum size of ${limit} bytes`);
        if (refusal) return answer(refusal);
        const raw = Buffer.concat(chunks, held);
        chunks = [];
        receive(raw, session).then(
          () => answer(null),
          () => answer(smtpError(451, TRY_LATER)),
        );
      });
    },
  };
  // Loaded when a receiver starts, not with the plugin.
  const { SMTPServer } = await import('smtp-server');
  const server = new SMTPServer(options);
  server.server.prependListener('connection', () => Object.assign(options, limitsNow(settings)));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', () => {});
  const port = (server.server.address() as AddressInfo).port;
  return { port, openConnections: () => server.connections.size, bufferedBytes: () => buffered, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The plugin's start hook: the receiver when mailbox_smtp_port is set, else nothing. */
export async function startMailboxListeners(services: Services): Promise<() => Promise<void>> {
  const port = services.settings.int('mailbox_smtp_port');
  if (port <= 0) return async () => {};
  const receiver = await startSmtpReceiver(services, { port, host: services.settings.string('mailbox_smtp_host') });
  return receiver.stop;
}
