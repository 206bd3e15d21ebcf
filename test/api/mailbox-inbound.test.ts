import net from 'node:net';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpReceiver, type SmtpReceiver } from '../../src/plugins/mailbox/smtp.js';
import { pluginModules, startPlugins, type PluginModule } from '../../src/plugins/modules.js';
import { action, createDriveApp, upload, type DriveApp } from './drive-upload-fixture.js';

const DOMAIN = 'mail.example.com';

let t: DriveApp;
beforeAll(async () => {
  t = await createDriveApp({ activePlugins: ['mailbox'], settings: { mailbox_domain: DOMAIN } });
});
afterAll(async () => t?.close());

/** The first line an SMTP server sends on connect. */
function greetingAt(port: number): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('data', (d) => {
      socket.destroy();
      resolve(d.toString());
    });
    socket.once('error', reject);
  });
}

/** An mbox of `count` messages: message 2 replies to message 1, message 3 has no Message-ID, message 4 quotes a From line. */
function mbox(count: number, tag: string): Buffer {
  const parts: string[] = [];
  for (let i = 1; i <= count; i++) {
    const headers = [
      `From: Writer ${i} <writer${i}@archive.example>`,
      `To: me@${DOMAIN}`,
      `Subject: ${tag} message ${i}`,
      `Date: Mon, 02 Feb 2026 10:${String(i % 60).padStart(2, '0')}:00 +0000`,
      ...(i === 3 ? [] : [`Message-ID: <${tag}-${i}@archive.example>`]),
      ...(i === 2 ? [`In-Reply-To: <${tag}-1@archive.example>`, `References: <${tag}-1@archive.example>`] : []),
      `Received: from hop.archive.example by mx.${DOMAIN}; Mon, 02 Feb 2026 10:00:00 +0000`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
    ];
    const body = i === 4 ? `Line one\n>From the quoted start\nLine three ü` : `Body of ${tag} ${i}`;
    parts.push(`From writer${i}@archive.example Mon Feb  2 10:00:00 2026\n${headers.join('\n')}\n\n${body}\n\n`);
  }
  return Buffer.from(parts.join(''), 'utf8');
}

describe('mailbox/import of an mbox uploaded through mail_import_archive', () => {
  it('imports 100 messages into threads, once per Message-ID', async () => {
    const k = await t.keyHeaders();
    const call = (name: string, payload: Record<string, unknown>) => action(t, k.headers, name, payload);
    await call('mailbox/mailboxes', {});
    const bytes = mbox(100, 'imp');
    const done = await upload(t, k.headers, bytes, { purpose: 'mail_import_archive', name: 'old.mbox', mime_type: 'application/mbox' });
    expect(done.statusCode).toBe(200);
    const fileId = done.json.data.file.id;

    const first = await call('mailbox/import', { file_id: fileId });
    expect(first.statusCode).toBe(200);
    expect(first.json.data).toMatchObject({ file_id: fileId, imported: 100, duplicates: 0, skipped: 0 });
    const list = await call('mailbox/thread_list', { limit: 100 });
    expect(list.json.data.total).toBe(99);
    const subjects = list.json.data.threads.map((x: { subject: string }) => x.subject);
    expect(subjects).toContain('imp message 100');
    const pair = list.json.data.threads.find((x: { message_count: number }) => x.message_count === 2);
    expect(pair.subject).toBe('imp message 2');
    const quoted = list.json.data.threads.find((x: { subject: string }) => x.subject === 'imp message 4');
    const thread = await call('mailbox/thread', { thread_id: quoted.thread_id });
    expect(thread.json.data.messages[0]).toMatchObject({ sender: '"Writer 4" <writer4@archive.example>', body: 'Line one\nFrom the quoted start\nLine three ü\n', direction: 'inbound', read: false });
    const timeline = await call('mailbox/message_timeline', { message_id: thread.json.data.messages[0].message_id });
    expect(timeline.json.data.events.map((e: { kind: string; title: string }) => [e.kind, e.title])).toEqual([
      ['received', 'Hop 1'],
      ['received', 'Imported'],
    ]);

    const again = await call('mailbox/import', { file_id: fileId });
    expect(again.json.data).toMatchObject({ imported: 0, duplicates: 100 });
    expect((await call('mailbox/thread_list', {})).json.data.total).toBe(99);
  });

  it("refuses another member's archive (422 not_found)", async () => {
    const owner = await t.keyHeaders();
    const other = await t.keyHeaders();
    await action(t, other.headers, 'mailbox/mailboxes', {});
    const done = await upload(t, owner.headers, mbox(2, 'own'), { purpose: 'mail_import_archive', name: 'a.mbox' });
    const res = await action(t, other.headers, 'mailbox/import', { file_id: done.json.data.file.id });
    expect([res.statusCode, res.json.errortype, res.json.data.reason]).toEqual([422, 'ActionError', 'not_found']);
  });
});

describe('the SMTP receiver', () => {
  let receiver: SmtpReceiver;
  beforeAll(async () => {
    receiver = await startSmtpReceiver(t.services, { port: 0, host: '127.0.0.1', maxBytes: 1024 * 1024 });
  });
  afterAll(async () => receiver?.stop());

  const transport = () => nodemailer.createTransport({ host: '127.0.0.1', port: receiver.port, secure: false, ignoreTLS: true });

  it('delivers a message to the mailbox of its RCPT TO address, where thread_list shows it', async () => {
    const k = await t.keyHeaders();
    const box = (await action(t, k.headers, 'mailbox/mailboxes', {})).json.data.mailboxes[0];
    const info = await transport().sendMail({ from: 'Far Away <far@away.example>', to: box.address, subject: 'Over SMTP', text: 'Hello by SMTP' });
    expect(info.accepted).toEqual([box.address]);
    const list = await action(t, k.headers, 'mailbox/thread_list', {});
    expect(list.json.data.threads).toEqual([expect.objectContaining({ sender: '"Far Away" <far@away.example>', subject: 'Over SMTP', snippet: 'Hello by SMTP', unread_count: 1, folder: 'inbox', locked: false })]);
  });

  it('refuses an unknown recipient with 550', async () => {
    const err = await transport()
      .sendMail({ from: 'far@away.example', to: `nobody-here@${DOMAIN}`, subject: 'x', text: 'y' })
      .then(() => null, (e: { responseCode?: number }) => e);
    expect(err?.responseCode).toBe(550);
  });

  it('answers 421 at connect while the plugin is inactive', async () => {
    await t.services.plugins.setActive('mailbox', false);
    try {
      const greeting = await greetingAt(receiver.port);
      expect(greeting.startsWith('421')).toBe(true);
    } finally {
      await t.services.plugins.setActive('mailbox', true);
    }
  });
});

describe('plugin start hooks (the server calls them; the CLI and tests do not)', () => {
  it("the mailbox plugin's start listens on mailbox_smtp_port when set, and does nothing at 0", async () => {
    const mailbox = (await pluginModules()).find((m) => m.name === 'mailbox')!;
    await t.services.settings.set('mailbox_smtp_port', 0);
    const noop = await mailbox.start!(t.services);
    await noop();
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as net.AddressInfo).port;
        probe.close(() => resolve(p));
      });
    });
    await t.services.settings.set('mailbox_smtp_port', port);
    const stop = await mailbox.start!(t.services);
    try {
      const greeting = await greetingAt(port);
      expect(greeting.startsWith('220')).toBe(true);
    } finally {
      await stop();
      await t.services.settings.set('mailbox_smtp_port', 0);
    }
  });

  it('startPlugins starts each module with a start hook and stops them newest first; a failed start stops those already started', async () => {
    const log: string[] = [];
    const mod = (name: string, fail = false): PluginModule => ({
      name,
      async start() {
        if (fail) throw new Error(`${name} failed`);
        log.push(`start ${name}`);
        return async () => void log.push(`stop ${name}`);
      },
    });
    const stop = await startPlugins([mod('a'), { name: 'none' }, mod('b')], t.services);
    await stop();
    expect(log).toEqual(['start a', 'start b', 'stop b', 'stop a']);
    log.length = 0;
    await expect(startPlugins([mod('a'), mod('c', true)], t.services)).rejects.toThrow('c failed');
    expect(log).toEqual(['start a', 'stop a']);
  });
});
