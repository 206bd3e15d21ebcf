import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateVault } from '../../src/accounts/vault/rotation.js';
import { sql, type Kysely } from 'kysely';
import { openContentKey } from '../../src/accounts/vault/sealed.js';
import type { DB } from '../../src/db/types.js';
import { deliver, MESSAGE_TABLE, type NewMessage } from '../../src/plugins/mailbox/messages.js';
import { SESSION_COOKIE } from '../../src/accounts/web-sessions.js';
import { ownMailbox } from '../../src/plugins/mailbox/mailboxes.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { multipartBody } from '../helpers/actions.js';
import { signIn, type WebClient } from '../helpers/browser-session.js';
import { gate, holdRotation, settledOrWaiting } from '../helpers/interleave.js';

const ORIGIN = 'https://members.example.com';
const DOMAIN = 'mail.example.com';
const ACTIONS = ['mailbox/mailboxes', 'mailbox/thread_list', 'mailbox/thread', 'mailbox/thread_action', 'mailbox/message_timeline', 'mailbox/send', 'mailbox/import', 'mailbox/create', 'mailbox/ping'];
const action = (name: string) => `/api/v1/action/${name}`;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ config: { baseUrl: ORIGIN }, activePlugins: ['mailbox'], settings: { mailbox_domain: DOMAIN } });
});
afterAll(async () => t?.close());

async function post(c: WebClient, name: string, payload: unknown = {}) {
  return c.api('POST', action(name), { payload });
}

/** A signed-in member whose vault (passphrase unlocker) is set up; the setup leaves the window open. */
async function memberWithVault() {
  const u = await t.createUser();
  const c = await signIn(t, u.email, u.password);
  const passphrase = 'correct horse battery staple';
  expect((await post(c, 'vault_setup_options', { password: u.password })).statusCode).toBe(200);
  const setup = await post(c, 'vault_setup_verify', { acknowledge_loss: true, passphrase });
  expect(setup.statusCode).toBe(200);
  const unlock = async () => expect((await post(c, 'vault_unlock_passphrase', { password: u.password, passphrase })).statusCode).toBe(200);
  const lock = async () => expect((await post(c, 'vault_lock')).statusCode).toBe(200);
  return { ...u, c, unlock, lock };
}

async function mailboxOf(c: WebClient) {
  const res = await post(c, 'mailbox/mailboxes');
  expect(res.statusCode).toBe(200);
  return res.json.data.mailboxes[0] as { mailbox_id: number; address: string; security_level: string; locked: boolean };
}

async function setLevel(mailboxId: number, level: string) {
  const staff = await t.staffHeaders();
  return t.request({ method: 'PUT', url: `/api/v1/Mailbox/${mailboxId}?mbx_security_level=${level}`, headers: staff.headers });
}

let seq = 0;
/** An inbound message, stored as the SMTP receiver and the import store them. */
async function inbound(userId: number, over: Partial<NewMessage> = {}) {
  const box = await ownMailbox(t.services.db, userId, null);
  return deliver(t.services.db, box, { ...message(box.address, ++seq), ...over });
}

function message(address: string, n: number): NewMessage {
  return {
    direction: 'inbound',
    messageIdHeader: `<m${n}.${Date.now()}@sender.example>`,
    inReplyTo: null,
    references: [],
    sender: `Sender ${n} <sender${n}@sender.example>`,
    recipients: address,
    subject: `Subject number ${n}`,
    body: `Body text of message ${n}`,
    hops: [`from relay.sender.example by ${DOMAIN}; Sun, 01 Mar 2026 11:00:0${n % 10} +0000`],
    sizeBytes: 1000 + n,
    attachmentCount: 0,
    time: t.clock.now(),
    event: { kind: 'received', title: 'Received', detail: 'by the SMTP receiver' },
  };
}

const metadataOf = (thread: Record<string, unknown>) => {
  const { sender: _s, subject: _j, snippet: _n, locked: _l, ...meta } = thread;
  return meta;
};

describe('while the plugin is inactive', () => {
  let off: TestApp;
  beforeAll(async () => {
    off = await createTestApp({ settings: { mailbox_domain: DOMAIN } });
  });
  afterAll(async () => off?.close());

  it('every mailbox action answers 404 ActionError like an unknown action, and the Mailbox model 404', async () => {
    const { headers } = await off.staffHeaders();
    const unknown = await off.request({ method: 'POST', url: action('mailbox/nothing'), headers, payload: {} });
    expect([unknown.statusCode, unknown.json.errortype]).toEqual([404, 'ActionError']);
    for (const name of ACTIONS) {
      const res = await off.request({ method: 'POST', url: action(name), headers, payload: {} });
      expect([name, res.statusCode, res.json.errortype]).toEqual([name, 404, 'ActionError']);
    }
    expect((await off.request({ method: 'GET', url: '/api/v1/Mailboxs', headers })).statusCode).toBe(404);
    const listed = await off.request({ method: 'GET', url: '/api/v1/actions', headers });
    expect(Object.keys(listed.json.data).filter((k) => k.startsWith('mailbox/'))).toEqual([]);
  });

  it('the /mail page is the site\'s not-found page', async () => {
    const res = await off.request({ method: 'GET', url: '/mail' });
    expect(res.statusCode).toBe(404);
    expect(res.body).toContain('There is no page here.');
    expect((await off.request({ method: 'GET', url: '/mail/app.js' })).statusCode).toBe(404);
  });

  it('its tables exist all the same (the plugin migration ran with the core ones)', async () => {
    const rows = await off.services.db
      .selectFrom('information_schema.tables' as never)
      .select('table_name' as never)
      .where('table_name' as never, 'in', ['mbx_mailboxes', 'mbt_mailbox_threads', 'mbm_mailbox_messages', 'mbl_mailbox_labels', 'mbf_mailbox_folders', 'mde_mailbox_delivery_events', 'mtl_mailbox_thread_labels'] as never)
      .execute();
    expect(rows.length).toBe(7);
  });
});

describe('the /mail page', () => {
  it('sends visitors to sign in, and serves members the page shell and its script', async () => {
    const anonymous = await t.request({ method: 'GET', url: '/mail' });
    expect([anonymous.statusCode, anonymous.headers.location]).toEqual([303, '/login?next=%2Fmail']);
    const u = await t.createUser();
    const c = await signIn(t, u.email, u.password);
    const res = await c.get('/mail');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('id="mail-view"');
    expect(res.body).toContain('href="/profile/security"');
    const script = await t.request({ method: 'GET', url: '/mail/app.js' });
    expect([script.statusCode, script.headers['content-type']]).toEqual([200, 'application/javascript; charset=utf-8']);
    expect(script.body).toContain("serviceApi.post('mailbox/thread_list'");
  });
});

describe('provisioning and the Mailbox model', () => {
  it("a member's first mailbox/mailboxes creates their default standard mailbox at {user id}@{mailbox_domain}", async () => {
    const member = await t.keyHeaders();
    const first = await t.request({ method: 'POST', url: action('mailbox/mailboxes'), headers: member.headers, payload: {} });
    expect(first.statusCode).toBe(200);
    expect(first.json.data.mailboxes).toEqual([
      expect.objectContaining({ address: `${member.userId}@${DOMAIN}`, security_level: 'standard', is_default: true, locked: false, unread_count: 0 }),
    ]);
    const again = await t.request({ method: 'POST', url: action('mailbox/mailboxes'), headers: member.headers, payload: {} });
    expect(again.json.data.mailboxes.map((m: { mailbox_id: number }) => m.mailbox_id)).toEqual([first.json.data.mailboxes[0].mailbox_id]);
  });

  it('is readable by its owner and staff, not by another member; only staff write it', async () => {
    const owner = await t.keyHeaders();
    const other = await t.keyHeaders();
    const staff = await t.staffHeaders();
    const box = (await t.request({ method: 'POST', url: action('mailbox/mailboxes'), headers: owner.headers, payload: {} })).json.data.mailboxes[0];
    const url = `/api/v1/Mailbox/${box.mailbox_id}`;
    const mine = await t.request({ method: 'GET', url, headers: owner.headers });
    expect(mine.statusCode).toBe(200);
    expect(mine.json.data).toMatchObject({ mbx_address: box.address, mbx_security_level: 'standard' });
    expect((await t.request({ method: 'GET', url, headers: staff.headers })).statusCode).toBe(200);
    const theirs = await t.request({ method: 'GET', url, headers: other.headers });
    expect([theirs.statusCode, theirs.json.errortype]).toEqual([403, 'AuthenticationError']);
    const listed = await t.request({ method: 'GET', url: '/api/v1/Mailboxs', headers: other.headers });
    expect(listed.statusCode).toBe(200);
    expect(listed.json.data.map((r: { mbx_mailbox_id: number }) => r.mbx_mailbox_id)).not.toContain(box.mailbox_id);
    const ownerWrite = await t.request({ method: 'PUT', url: `${url}?mbx_security_level=standard`, headers: owner.headers });
    expect(ownerWrite.statusCode).toBe(404);
  });

  it('staff create a further mailbox for a member with mailbox/create; members may not', async () => {
    const owner = await t.keyHeaders();
    const staff = await t.staffHeaders();
    const first = (await t.request({ method: 'POST', url: action('mailbox/mailboxes'), headers: owner.headers, payload: {} })).json.data.mailboxes[0];
    const address = `team-${owner.userId}@${DOMAIN}`;
    const made = await t.request({ method: 'POST', url: action('mailbox/create'), headers: staff.headers, payload: { usr_user_id: owner.userId, mbx_address: address } });
    expect(made.statusCode).toBe(200);
    expect(made.json.data).toMatchObject({ usr_user_id: owner.userId, address, security_level: 'standard', is_default: false });
    const listed = await t.request({ method: 'POST', url: action('mailbox/mailboxes'), headers: owner.headers, payload: {} });
    expect(listed.json.data.mailboxes.map((m: { address: string }) => m.address)).toEqual([first.address, address]);
    const taken = await t.request({ method: 'POST', url: action('mailbox/create'), headers: staff.headers, payload: { usr_user_id: owner.userId, mbx_address: address.toUpperCase() } });
    expect([taken.statusCode, taken.json.data.reason]).toEqual([422, 'address_taken']);
    const sealed = await t.request({ method: 'POST', url: action('mailbox/create'), headers: staff.headers, payload: { usr_user_id: owner.userId, mbx_address: `x-${address}`, mbx_security_level: 'fortress' } });
    expect([sealed.statusCode, sealed.json.data.reason]).toEqual([422, 'vault_required']);
    const byMember = await t.request({ method: 'POST', url: action('mailbox/create'), headers: owner.headers, payload: { usr_user_id: owner.userId, mbx_address: `y-${address}` } });
    expect([byMember.statusCode, byMember.json.errortype]).toEqual([403, 'AuthenticationError']);
  });

  it('refuses a level above standard for an owner without a vault (400 TransactionError)', async () => {
    const owner = await t.keyHeaders();
    const box = (await t.request({ method: 'POST', url: action('mailbox/mailboxes'), headers: owner.headers, payload: {} })).json.data.mailboxes[0];
    const res = await setLevel(box.mailbox_id, 'private');
    expect([res.statusCode, res.json.errortype]).toEqual([400, 'TransactionError']);
    expect(res.json.error).toContain('needs its owner to have a vault');
  });
});

describe('a standard mailbox', () => {
  it('answers cleartext to an API key, and thread_action changes metadata', async () => {
    const member = await t.keyHeaders();
    const call = (name: string, payload: unknown = {}) => t.request({ method: 'POST', url: action(name), headers: member.headers, payload: payload as object });
    await call('mailbox/mailboxes');
    const first = await inbound(member.userId);
    await inbound(member.userId, { inReplyTo: `<m${seq}.x@nowhere>` });
    const list = await call('mailbox/thread_list');
    expect(list.statusCode).toBe(200);
    expect(list.json.data.locked).toBe(false);
    expect(list.json.data.total).toBe(2);
    const row = list.json.data.threads.find((x: { thread_id: number }) => x.thread_id === first.threadId);
    expect(row).toMatchObject({ sender: `Sender ${seq - 1} <sender${seq - 1}@sender.example>`, subject: `Subject number ${seq - 1}`, folder: 'inbox', unread_count: 1, message_count: 1, starred: false, labels: [], locked: false });

    const read = await call('mailbox/thread_action', { thread_id: first.threadId, action: 'read' });
    expect(read.statusCode).toBe(200);
    expect(read.json.data.thread.unread_count).toBe(0);
    const star = await call('mailbox/thread_action', { thread_id: first.threadId, action: 'star' });
    expect(star.json.data.thread.starred).toBe(true);
    const label = await call('mailbox/thread_action', { thread_id: first.threadId, action: 'label', label: 'Receipts' });
    expect(label.json.data.thread.labels).toEqual(['Receipts']);
    const byLabel = await call('mailbox/thread_list', { label: 'receipts' });
    expect(byLabel.json.data.threads.map((x: { thread_id: number }) => x.thread_id)).toEqual([first.threadId]);
    const moved = await call('mailbox/thread_action', { thread_id: first.threadId, action: 'move', folder: 'archive' });
    expect(moved.json.data.thread.folder).toBe('archive');
    const noLabel = await call('mailbox/thread_action', { thread_id: first.threadId, action: 'label' });
    expect([noLabel.statusCode, noLabel.json.errortype]).toEqual([422, 'ValidationError']);
    const del = await call('mailbox/thread_action', { thread_id: first.threadId, action: 'delete' });
    expect(del.json.data).toEqual({ thread_id: first.threadId, deleted: true });
    expect((await call('mailbox/thread_list')).json.data.total).toBe(1);
    const gone = await call('mailbox/thread', { thread_id: first.threadId });
    expect([gone.statusCode, gone.json.data.reason]).toEqual([422, 'not_found']);
  });
});

describe('a sealed mailbox, locked and unlocked', () => {
  it('seals on a raise (the reseal task), answers cleartext while the window is open and placeholders with metadata while locked', async () => {
    const m = await memberWithVault();
    const box = await mailboxOf(m.c);
    const before = await inbound(m.userId, { subject: 'Written before the raise' });
    const raised = await setLevel(box.mailbox_id, 'private');
    expect(raised.statusCode).toBe(200);
    const [outcome] = await t.services.scheduler.runNow('mailbox_reseal');
    expect(outcome).toMatchObject({ result: { sealed: 1 } });
    const stored = await t.services.db
      .selectFrom('mbm_mailbox_messages' as never)
      .select(['mbm_subject', 'mbm_sealed_key'] as never)
      .where('mbm_mailbox_message_id' as never, '=', before.messageId as never)
      .executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ mbm_sealed_key: expect.any(String) });
    expect(JSON.stringify(stored)).not.toContain('Written before the raise');
    const after = await inbound(m.userId, { subject: 'Written after the raise', body: 'Sealed body words' });
    const raw = await t.services.db.selectFrom('mbm_mailbox_messages' as never).selectAll().where('mbm_mailbox_message_id' as never, '=', after.messageId as never).executeTakeFirstOrThrow();
    expect(JSON.stringify(raw)).not.toContain('Sealed body words');

    // Unlocked (the setup left the window open).
    const open = await post(m.c, 'mailbox/thread_list');
    expect(open.statusCode).toBe(200);
    expect(open.json.data.locked).toBe(false);
    expect(open.json.data.threads.map((x: { subject: string }) => x.subject).sort()).toEqual(['Written after the raise', 'Written before the raise']);
    const openThread = await post(m.c, 'mailbox/thread', { thread_id: after.threadId });
    expect(openThread.json.data.messages[0]).toMatchObject({ subject: 'Written after the raise', body: 'Sealed body words', locked: false });
    const openTimeline = await post(m.c, 'mailbox/message_timeline', { message_id: after.messageId });
    expect(openTimeline.json.data.locked).toBe(false);
    expect(openTimeline.json.data.events.map((e: { kind: string; title: string }) => [e.kind, e.title])).toEqual([
      ['received', 'Hop 1'],
      ['received', 'Received'],
    ]);
    expect((await post(m.c, 'mailbox/mailboxes')).json.data.mailboxes[0]).toMatchObject({ security_level: 'private', locked: false });

    // Locked: the same metadata, placeholders for content, locked true; never an error.
    await m.lock();
    const locked = await post(m.c, 'mailbox/thread_list');
    expect(locked.statusCode).toBe(200);
    expect(locked.json.data.locked).toBe(true);
    expect(locked.json.data.threads.map(metadataOf)).toEqual(open.json.data.threads.map(metadataOf));
    for (const row of locked.json.data.threads) expect(row).toMatchObject({ sender: '(locked)', subject: '(locked)', snippet: '(locked)', locked: true });
    const lockedThread = await post(m.c, 'mailbox/thread', { thread_id: after.threadId });
    expect(lockedThread.statusCode).toBe(200);
    expect(lockedThread.json.data.locked).toBe(true);
    expect(lockedThread.json.data.thread).toEqual(openThread.json.data.thread);
    expect(lockedThread.json.data.messages[0]).toMatchObject({
      message_id: after.messageId,
      sender: '(locked)',
      recipients: '(locked)',
      subject: '(locked)',
      body: '(locked)',
      size_bytes: openThread.json.data.messages[0].size_bytes,
      time: openThread.json.data.messages[0].time,
      read: false,
      locked: true,
    });
    const lockedTimeline = await post(m.c, 'mailbox/message_timeline', { message_id: after.messageId, refresh_delivery: 1 });
    expect(lockedTimeline.statusCode).toBe(200);
    expect(lockedTimeline.json.data.locked).toBe(true);
    expect(lockedTimeline.json.data.events).toEqual([{ time: '2026-03-01 12:00:00', kind: 'received', title: 'Received', detail: 'by the SMTP receiver', meta: {} }]);
    expect(lockedTimeline.json.data.notes.length).toBe(2);
    expect((await post(m.c, 'mailbox/mailboxes')).json.data.mailboxes[0]).toMatchObject({ security_level: 'private', locked: true });

    // Metadata actions work while locked.
    for (const [act, extra] of [['read', {}], ['star', {}], ['label', { label: 'Travel' }], ['move', { folder: 'archive' }]] as const) {
      const res = await post(m.c, 'mailbox/thread_action', { thread_id: after.threadId, action: act, ...extra });
      expect([act, res.statusCode]).toEqual([act, 200]);
    }
    const changed = (await post(m.c, 'mailbox/thread', { thread_id: after.threadId })).json.data.thread;
    expect(changed).toMatchObject({ starred: true, labels: ['Travel'], folder: 'archive', unread_count: 0 });

    // An API key of the same member has no window: always locked.
    const session = await t.login(m.email, m.password);
    const viaKey = await t.request({ method: 'POST', url: action('mailbox/thread_list'), headers: session.headers, payload: {} });
    expect(viaKey.json.data.locked).toBe(true);

    await m.unlock();
    const reopened = await post(m.c, 'mailbox/thread', { thread_id: after.threadId });
    expect(reopened.json.data.messages[0]).toMatchObject({ subject: 'Written after the raise', locked: false });
  });
});

describe('a vault rotation', () => {
  it('re-seals the content keys of sealed messages (the plugin\'s contentResealer), so they open under the new key', async () => {
    const m = await memberWithVault();
    const box = await mailboxOf(m.c);
    expect((await setLevel(box.mailbox_id, 'private')).statusCode).toBe(200);
    const got = await inbound(m.userId, { subject: 'Kept across the rotation' });
    const window = t.services.vaultWindows.forSession(m.c.jar.cookies.get(SESSION_COOKIE)!, '127.0.0.1');
    const open = (await window.unsealFor(t.services.db, m.userId))!;
    expect(open).not.toBeNull();
    const rotated = await t.services.db.transaction().execute((trx) => rotateVault(trx, open.vault, open.secretKey, { passphrase: 'a new passphrase for the vault' }, t.clock.now(), t.services.vaultParts.resealers));
    const closed = await post(m.c, 'mailbox/thread', { thread_id: got.threadId });
    expect(closed.json.data.locked).toBe(true);
    await window.openWith(t.services.db, rotated.vault, rotated.secretKey);
    const res = await post(m.c, 'mailbox/thread', { thread_id: got.threadId });
    expect(res.json.data.messages[0]).toMatchObject({ subject: 'Kept across the rotation', locked: false });
  });
});

describe('a vault rotation interleaved with sealing writers', () => {
  /** Every sealed message of the member, and whether its content key opens with the vault's current secret. */
  async function messagesOpen(m: { c: WebClient; userId: number }) {
    const window = t.services.vaultWindows.forSession(m.c.jar.cookies.get(SESSION_COOKIE)!, '127.0.0.1');
    const open = (await window.unsealFor(t.services.db, m.userId))!;
    expect(open).not.toBeNull();
    const { rows } = await sql<{ mbm_mailbox_message_id: number; mbm_sealed_key: string | null }>`
      select mbm_mailbox_message_id, mbm_sealed_key from mbm_mailbox_messages join mbx_mailboxes on mbx_mailbox_id = mbm_mbx_mailbox_id
      where mbx_usr_user_id = ${m.userId} order by mbm_mailbox_message_id`.execute(t.services.db);
    return {
      generation: open.vault.generation,
      opens: rows.map(
        (r) => r.mbm_sealed_key !== null && openContentKey({ table: MESSAGE_TABLE, id: r.mbm_mailbox_message_id, sealedKey: r.mbm_sealed_key }, open.secretKey) !== null,
      ),
    };
  }

  async function inboundIn(db: Kysely<DB>, userId: number, subject: string) {
    const box = await ownMailbox(db, userId, null);
    return deliver(db, box, { ...message(box.address, ++seq), subject });
  }

  it('waits for a delivery that sealed to the old key and has not committed, then re-seals it', async () => {
    const m = await memberWithVault();
    const box = await mailboxOf(m.c);
    expect((await setLevel(box.mailbox_id, 'private')).statusCode).toBe(200);
    await inbound(m.userId, { subject: 'Before everything' });
    expect((await post(m.c, 'vault_rotate_options')).statusCode).toBe(200);
    const sealed = gate();
    const commit = gate();
    const holding = t.services.db.transaction().execute(async (trx) => {
      await inboundIn(trx, m.userId, 'Sealed before the rotation, committed after it started');
      sealed.open();
      await commit.opened;
    });
    await sealed.opened;
    const rotation = post(m.c, 'vault_rotate_verify', { password: m.password });
    try {
      // PostgreSQL: the rotation now waits for the delivery's hold on the vault (without it, it would
      // commit here and the delivery's message would stay sealed to a retired key).
      await settledOrWaiting(t.services.db, [rotation]);
    } finally {
      commit.open();
    }
    await holding;
    const rotated = await rotation;
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json.data.key_generation).toBe(2);
    expect(await messagesOpen(m)).toEqual({ generation: 2, opens: [true, true] });
  });

  it('deliveries and the reseal task that come during a rotation wait for it and seal to the new key', async () => {
    const m = await memberWithVault();
    const box = await mailboxOf(m.c);
    // Two messages in the clear, for the reseal task to seal after the raise.
    await inbound(m.userId, { subject: 'Clear one' });
    await inbound(m.userId, { subject: 'Clear two' });
    expect((await setLevel(box.mailbox_id, 'private')).statusCode).toBe(200);
    await inbound(m.userId, { subject: 'Sealed before the rotation' });
    expect((await post(m.c, 'vault_rotate_options')).statusCode).toBe(200);
    const held = holdRotation(t.services, m.userId);
    try {
      const rotation = post(m.c, 'vault_rotate_verify', { password: m.password });
      await held.reached;
      // The rotation has re-sealed what was there and holds its transaction open: now the writers come.
      const writers = [
        inbound(m.userId, { subject: 'During the rotation 1' }),
        inbound(m.userId, { subject: 'During the rotation 2' }),
        t.services.scheduler.runNow('mailbox_reseal'),
      ];
      // PostgreSQL: all three wait for the rotation (without its hold they would seal to the retiring key).
      await settledOrWaiting(t.services.db, writers, 3);
      held.release();
      expect((await rotation).statusCode).toBe(200);
      await Promise.all(writers);
    } finally {
      held.remove();
    }
    expect(await messagesOpen(m)).toEqual({ generation: 2, opens: [true, true, true, true, true] });
    const listed = await post(m.c, 'mailbox/thread_list');
    expect(listed.json.data.locked).toBe(false);
    expect(listed.json.data.threads.map((x: { subject: string }) => x.subject).sort()).toEqual(
      ['Clear one', 'Clear two', 'During the rotation 1', 'During the rotation 2', 'Sealed before the rotation'],
    );
  });
});

describe('mailbox/send', () => {
  it('a Fortress compose while locked answers {locked: true} and sends and stores nothing; after unlock it is sent with its attachments', async () => {
    const m = await memberWithVault();
    const box = await mailboxOf(m.c);
    expect((await setLevel(box.mailbox_id, 'fortress')).statusCode).toBe(200);
    const to = `friend-${Date.now()}@elsewhere.example`;
    const body = multipartBody({ to, subject: 'Fortress hello', body: 'The sealed words' }, [
      { filename: 'a.txt', type: 'text/plain', content: 'first file' },
      { filename: 'b.bin', type: 'application/octet-stream', content: Buffer.alloc(2048, 7) },
    ]);
    const send = () => m.c.api('POST', action('mailbox/send'), { payload: body.payload, headers: body.headers });
    const outbox = () => t.services.db.selectFrom('mob_mail_outbox').selectAll().where('mob_to', '=', to).execute();

    await m.lock();
    const refused = await send();
    expect(refused.statusCode).toBe(200);
    expect(refused.json.data).toMatchObject({ locked: true, sent: false });
    expect(await outbox()).toEqual([]);
    expect((await post(m.c, 'mailbox/thread_list')).json.data.total).toBe(0);

    await m.unlock();
    const sent = await send();
    expect(sent.statusCode).toBe(200);
    expect(sent.json.data).toMatchObject({ locked: false, sent: true, attachment_count: 2, size_bytes: 'The sealed words'.length + 'first file'.length + 2048 });
    const rows = await outbox();
    expect(rows.map((r) => [r.mob_from, r.mob_subject, r.mob_text, r.mob_template])).toEqual([[box.address, 'Fortress hello', 'The sealed words', 'mailbox_send']]);
    const list = await post(m.c, 'mailbox/thread_list', { folder: 'sent' });
    expect(list.json.data.threads).toEqual([expect.objectContaining({ thread_id: sent.json.data.thread_id, subject: 'Fortress hello', sender: box.address, folder: 'sent', attachment_count: 2, unread_count: 0 })]);
    const timeline = await post(m.c, 'mailbox/message_timeline', { message_id: sent.json.data.message_id });
    expect(timeline.json.data.events.map((e: { kind: string }) => e.kind)).toEqual(['queued']);
  });

  it('a private mailbox sends while locked (sealing needs only the public key) and keeps the sent copy sealed', async () => {
    const m = await memberWithVault();
    const box = await mailboxOf(m.c);
    expect((await setLevel(box.mailbox_id, 'private')).statusCode).toBe(200);
    await m.lock();
    const to = `pal-${Date.now()}@elsewhere.example`;
    const res = await post(m.c, 'mailbox/send', { to, subject: 'Private hello', body: 'words' });
    expect(res.json.data).toMatchObject({ locked: false, sent: true });
    expect((await t.services.db.selectFrom('mob_mail_outbox').select('mob_subject').where('mob_to', '=', to).execute()).length).toBe(1);
    const list = await post(m.c, 'mailbox/thread_list');
    expect(list.json.data.threads[0]).toMatchObject({ subject: '(locked)', locked: true });
  });

  it('a reply goes into the same thread', async () => {
    const member = await t.keyHeaders();
    const call = (name: string, payload: unknown = {}) => t.request({ method: 'POST', url: action(name), headers: member.headers, payload: payload as object });
    await call('mailbox/mailboxes');
    const got = await inbound(member.userId);
    const reply = await call('mailbox/send', { thread_id: got.threadId, to: 'sender@sender.example', subject: 'Re: hi', body: 'thanks' });
    expect(reply.json.data.thread_id).toBe(got.threadId);
    const thread = await call('mailbox/thread', { thread_id: got.threadId });
    expect(thread.json.data.messages.map((x: { direction: string }) => x.direction)).toEqual(['inbound', 'outbound']);
  });

  it('refuses more than 25 MB of attachments together, and a bad address (422 ValidationError)', async () => {
    const member = await t.keyHeaders();
    await t.request({ method: 'POST', url: action('mailbox/mailboxes'), headers: member.headers, payload: {} });
    const nine = Buffer.alloc(9 * 1024 * 1024, 1);
    const body = multipartBody({ to: 'x@elsewhere.example', subject: 'big' }, [1, 2, 3].map((i) => ({ filename: `f${i}.bin`, type: 'application/octet-stream', content: nine })));
    const res = await t.request({ method: 'POST', url: action('mailbox/send'), headers: { ...member.headers, ...body.headers }, payload: body.payload });
    expect([res.statusCode, res.json.errortype, res.json.validation_errors?.attachments]).toEqual([422, 'ValidationError', 'the files together are larger than 25 MB']);
    const bad = await t.request({ method: 'POST', url: action('mailbox/send'), headers: member.headers, payload: { to: 'not-an-address' } });
    expect([bad.statusCode, bad.json.errortype]).toEqual([422, 'ValidationError']);
  });

  it('counts the 10 MB per file in decimal units, as the site shows sizes: 10,000,001 bytes is refused', async () => {
    const member = await t.keyHeaders();
    await t.request({ method: 'POST', url: action('mailbox/mailboxes'), headers: member.headers, payload: {} });
    const body = multipartBody({ to: 'x@elsewhere.example', subject: 'big' }, [{ filename: 'over.bin', type: 'application/octet-stream', content: Buffer.alloc(10_000_001, 1) }]);
    const res = await t.request({ method: 'POST', url: action('mailbox/send'), headers: { ...member.headers, ...body.headers }, payload: body.payload });
    expect([res.statusCode, res.json.errortype, res.json.validation_errors?.attachments]).toEqual([422, 'ValidationError', 'over.bin is larger than 10 MB']);
  });

  it("with the default mailbox_domain localhost, sends to the member's own default address and to addresses in that domain; other dotless domains and garbage are refused", async () => {
    await t.services.settings.set('mailbox_domain', 'localhost');
    try {
      const member = await t.keyHeaders();
      const call = (payload: object) => t.request({ method: 'POST', url: action('mailbox/send'), headers: member.headers, payload });
      const own = (await t.request({ method: 'POST', url: action('mailbox/mailboxes'), headers: member.headers, payload: {} })).json.data.mailboxes[0];
      expect(own.address).toBe(`${member.userId}@localhost`);
      const toSelf = await call({ to: own.address, subject: 'Note to self', body: 'remember' });
      expect([toSelf.statusCode, toSelf.json.data?.sent]).toEqual([200, true]);
      const sameDomain = await call({ to: `${own.address}; 987654@LOCALHOST, friend@elsewhere.example`, subject: 'Hi all' });
      expect([sameDomain.statusCode, sameDomain.json.data?.sent]).toEqual([200, true]);
      const rows = await t.services.db.selectFrom('mob_mail_outbox').select(['mob_to', 'mob_subject']).where('mob_from', '=', own.address).orderBy('mob_mail_outbox_id').execute();
      expect(rows.map((r) => [r.mob_to, r.mob_subject])).toEqual([
        [own.address, 'Note to self'],
        [`${own.address}, 987654@LOCALHOST, friend@elsewhere.example`, 'Hi all'],
      ]);
      for (const [to, why] of [
        ['someone@intranet', 'not an email address: someone@intranet'],
        [`${own.address}, @localhost`, 'not an email address: @localhost'],
        ['me@local_host', 'not an email address: me@local_host'],
        ['garbage', 'not an email address: garbage'],
      ]) {
        const res = await call({ to, subject: 'x' });
        expect([res.statusCode, res.json.errortype, res.json.validation_errors?.to], to).toEqual([422, 'ValidationError', why]);
      }
    } finally {
      await t.services.settings.set('mailbox_domain', DOMAIN);
    }
  });

  it('sends to a live mailbox whose dotless domain is no longer the mailbox_domain', async () => {
    await t.services.settings.set('mailbox_domain', 'oldhost');
    const earlier = await t.keyHeaders();
    const address = (await t.request({ method: 'POST', url: action('mailbox/mailboxes'), headers: earlier.headers, payload: {} })).json.data.mailboxes[0].address;
    await t.services.settings.set('mailbox_domain', DOMAIN);
    expect(address).toBe(`${earlier.userId}@oldhost`);
    const member = await t.keyHeaders();
    await t.request({ method: 'POST', url: action('mailbox/mailboxes'), headers: member.headers, payload: {} });
    const res = await t.request({ method: 'POST', url: action('mailbox/send'), headers: member.headers, payload: { to: address.toUpperCase(), subject: 'Still here' } });
    expect([res.statusCode, res.json.data?.sent]).toEqual([200, true]);
    const stranger = await t.request({ method: 'POST', url: action('mailbox/send'), headers: member.headers, payload: { to: 'nobody@oldhost', subject: 'x' } });
    expect([stranger.statusCode, stranger.json.validation_errors?.to]).toEqual([422, 'not an email address: nobody@oldhost']);
  });
});

describe('another user', () => {
  it('cannot list, read, change or time your threads', async () => {
    const owner = await t.keyHeaders();
    const other = await t.keyHeaders();
    const mine = (await t.request({ method: 'POST', url: action('mailbox/mailboxes'), headers: owner.headers, payload: {} })).json.data.mailboxes[0];
    await t.request({ method: 'POST', url: action('mailbox/mailboxes'), headers: other.headers, payload: {} });
    const got = await inbound(owner.userId, { subject: 'Only for the owner' });
    const as = (name: string, payload: object) => t.request({ method: 'POST', url: action(name), headers: other.headers, payload });
    for (const [name, payload] of [
      ['mailbox/thread_list', { mailbox_id: mine.mailbox_id }],
      ['mailbox/thread', { thread_id: got.threadId }],
      ['mailbox/thread_action', { thread_id: got.threadId, action: 'delete' }],
      ['mailbox/message_timeline', { message_id: got.messageId }],
      ['mailbox/send', { thread_id: got.threadId, to: 'x@elsewhere.example' }],
    ] as const) {
      const res = await as(name, payload);
      expect([name, res.statusCode, res.json.errortype, res.json.data?.reason]).toEqual([name, 422, 'ActionError', 'not_found']);
      expect(res.body).not.toContain('Only for the owner');
    }
    const theirs = await as('mailbox/thread_list', {});
    expect(theirs.json.data.threads).toEqual([]);
    const still = await t.request({ method: 'POST', url: action('mailbox/thread'), headers: owner.headers, payload: { thread_id: got.threadId } });
    expect(still.json.data.messages[0].subject).toBe('Only for the owner');
  });
});
