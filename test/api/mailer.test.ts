import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

/** Just enough SMTP to accept messages: no TLS offered, no auth required. */
function fakeSmtp(): Promise<{ server: Server; port: number; messages: Array<{ from: string; to: string[]; data: string }> }> {
  const messages: Array<{ from: string; to: string[]; data: string }> = [];
  const server = createServer((socket: Socket) => {
    let buffer = '';
    let inData = false;
    let current = { from: '', to: [] as string[], data: '' };
    socket.write('220 fake ESMTP\r\n');
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          current.data = buffer.slice(0, end);
          buffer = buffer.slice(end + 5);
          inData = false;
          messages.push(current);
          current = { from: '', to: [], data: '' };
          socket.write('250 queued\r\n');
          continue;
        }
        const nl = buffer.indexOf('\r\n');
        if (nl < 0) return;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'EHLO' || verb === 'HELO') socket.write('250 fake\r\n');
        else if (verb === 'MAIL') (current.from = line), socket.write('250 ok\r\n');
        else if (verb === 'RCPT') current.to.push(line), socket.write('250 ok\r\n');
        else if (verb === 'DATA') (inData = true), socket.write('354 go\r\n');
        else if (verb === 'QUIT') socket.end('221 bye\r\n');
        else socket.write('250 ok\r\n');
      }
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port, messages })));
}

describe('outgoing mail', () => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof fakeSmtp>>;
  beforeAll(async () => {
    smtp = await fakeSmtp();
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
    await new Promise((r) => smtp.server.close(r));
  });

  it('goes to the outbox table while smtp_host is empty', async () => {
    const { email } = await t.createUser();
    await t.request({ method: 'POST', url: '/api/v1/action/password_reset_1', payload: { email } });
    const rows = await t.services.db.selectFrom('mob_mail_outbox').selectAll().where('mob_to', '=', email).execute();
    expect(rows.map((r) => [r.mob_from, r.mob_template, r.mob_subject])).toEqual([['no-reply@localhost', 'password_reset', 'Reset your Gatehouse password']]);
  });

  it('goes over SMTP once smtp_host is set, and not to the outbox', async () => {
    await t.services.settings.set('smtp_host', '127.0.0.1');
    await t.services.settings.set('smtp_port', smtp.port);
    await t.services.settings.set('mail_from_address', 'members@example.org');
    try {
      const { email } = await t.createUser();
      const res = await t.request({ method: 'POST', url: '/api/v1/action/password_reset_1', payload: { email } });
      expect(res.statusCode).toBe(200);
      await vi.waitFor(() => expect(smtp.messages).toHaveLength(1));
      const [m] = smtp.messages;
      expect(m!.from).toBe('MAIL FROM:<members@example.org>');
      expect(m!.to).toEqual([`RCPT TO:<${email}>`]);
      expect(m!.data).toContain('Subject: Reset your Gatehouse password');
      // The sender address under the site's name (site_name).
      expect(m!.data).toMatch(/^From: "?Gatehouse"? <members@example\.org>\r?$/m);
      // The body is quoted-printable: undo soft line breaks and the encoded '='.
      expect(m!.data.replace(/=\r\n/g, '').replace(/=3D/g, '=')).toMatch(/act_code=[0-9a-f]{48}/);
      const rows = await t.services.db.selectFrom('mob_mail_outbox').selectAll().where('mob_to', '=', email).execute();
      expect(rows).toEqual([]);
    } finally {
      await t.services.settings.set('smtp_host', '');
    }
  });

  it('answers without waiting for the SMTP server, so its delay cannot tell whether the address has an account', async () => {
    // A server that accepts the connection and never greets: a request that waited for it would hang.
    const held: Socket[] = [];
    const silent = createServer((socket) => void held.push(socket));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    await t.services.settings.set('smtp_host', '127.0.0.1');
    await t.services.settings.set('smtp_port', (silent.address() as AddressInfo).port);
    try {
      const { email } = await t.createUser();
      for (const address of [email, 'nobody-here@example.org']) {
        const res = await t.request({ method: 'POST', url: '/api/v1/action/password_reset_1', payload: { email: address } });
        expect(res.statusCode).toBe(200);
      }
      await vi.waitFor(() => expect(held.length).toBe(1)); // the one real account's mail is on its way
    } finally {
      await t.services.settings.set('smtp_host', '');
      for (const socket of held) socket.destroy();
      silent.close();
    }
  });
});
