import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { Kysely } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DB } from '../../src/db/types.js';
import { buildApp } from '../../src/boot/app.js';
import { multipartBody } from '../helpers/actions.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

// The assistant plugin's chat (DESIGN 12) against a fake OpenAI-compatible chat-completions server on
// 127.0.0.1: what the provider is sent, what is stored, and every way the provider can fail.

const API_KEY = 'sk-test-assistant-0123456789abcdef';
const MODEL = 'test-model-1';

type Behaviour = 'reply' | 'hang' | 'status500' | 'malformed';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: { model: string; messages: Array<{ role: string; content: string | Array<{ type: string; text: string }> }> };
}

/** A chat-completions server that records each request and answers as told. */
class FakeProvider {
  readonly seen: Seen[] = [];
  behaviour: Behaviour = 'reply';
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      const n = this.seen.length;
      if (this.behaviour === 'hang') return;
      if (this.behaviour === 'status500') return void res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"boom"}}');
      if (this.behaviour === 'malformed') return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"choices":[]}');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `c${n}`, choices: [{ index: 0, message: { role: 'assistant', content: `fake reply ${n}` } }] }));
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const SETTINGS_DEFAULTS = {
  assistant_timeout_ms: 60_000,
  assistant_max_message_chars: 8000,
  assistant_max_attachments: 5,
  assistant_max_attachment_bytes: 2 * 1024 * 1024,
  assistant_max_request_bytes: 512 * 1024,
};

let fake: FakeProvider;
let t: TestApp;
let dataDir: string;
let baseUrl: string;

async function send(headers: Record<string, string>, fields: Record<string, string>, files: Parameters<typeof multipartBody>[1] = []) {
  const body = multipartBody(fields, files);
  return t.request({ method: 'POST', url: '/api/v1/action/assistant/chat_send', headers: { ...headers, ...body.headers }, payload: body.payload });
}

async function thread(headers: Record<string, string>, conversationId: number) {
  return t.request({ method: 'POST', url: '/api/v1/action/assistant/chat_thread', headers, payload: { conversation_id: conversationId } });
}

const messageCount = async () =>
  Number(
    (await (t.services.db as unknown as Kysely<{ asm_assistant_messages: { asm_assistant_message_id: number } }>)
      .selectFrom('asm_assistant_messages')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow()).n,
  );

async function blobBytes(db: Kysely<DB>, fileId: number): Promise<Buffer> {
  const row = await db
    .selectFrom('fil_files')
    .innerJoin('fbb_file_blobs', 'fbb_file_blob_id', 'fil_fbb_file_blob_id')
    .select('fbb_storage_key')
    .where('fil_file_id', '=', fileId)
    .executeTakeFirstOrThrow();
  const chunks: Buffer[] = [];
  for await (const c of await t.services.driveStorage.blobs.get(row.fbb_storage_key)) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

beforeAll(async () => {
  fake = new FakeProvider();
  baseUrl = await fake.start();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gh-assistant-'));
  t = await createTestApp({
    config: { dataDir },
    activePlugins: ['assistant'],
    settings: { assistant_api_base: baseUrl, assistant_model: MODEL, assistant_api_key: API_KEY },
  });
});

afterAll(async () => {
  await t?.close();
  await fake?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

beforeEach(async () => {
  fake.behaviour = 'reply';
  fake.seen.length = 0;
  for (const [name, value] of Object.entries(SETTINGS_DEFAULTS)) await t.services.settings.set(name, value);
});

describe('assistant/chat_send', () => {
  it('a message with two attachments gets the provider reply; the provider saw the model, the key and both files', async () => {
    const member = await t.keyHeaders();
    const notes = 'line one\nline two: ünïcode';
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]);
    const res = await send(member.headers, { message: 'What is in these files?' }, [
      { filename: 'notes.txt', type: 'text/plain', content: notes },
      { filename: 'photo.png', type: 'image/png', content: png },
    ]);
    expect(res.statusCode).toBe(200);
    const data = res.json.data;
    expect(data).toMatchObject({ reply: 'fake reply 1' });
    expect(Number.isInteger(data.conversation_id)).toBe(true);
    expect(Number.isInteger(data.message_id)).toBe(true);
    expect(data.user_message_id).toBeLessThan(data.message_id);

    expect(fake.seen).toHaveLength(1);
    const seen = fake.seen[0]!;
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/v1/chat/completions');
    expect(seen.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(seen.headers['content-type']).toBe('application/json');
    const notesBytes = Buffer.byteLength(notes);
    expect(seen.body).toEqual({
      model: MODEL,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these files?' },
            { type: 'text', text: `Attachment 1: notes.txt (text/plain, ${notesBytes} bytes)\n${notes}` },
            { type: 'text', text: 'Attachment 2: photo.png (image/png, 6 bytes); not a text file, its content is not included' },
          ],
        },
      ],
    });

    // The files are the member's file rows over blobs holding their bytes.
    expect(data.attachments.map((a: { name: string; mime_type: string; size_bytes: number }) => [a.name, a.mime_type, a.size_bytes])).toEqual([
      ['notes.txt', 'text/plain', notesBytes],
      ['photo.png', 'image/png', 6],
    ]);
    const rows = await t.services.db
      .selectFrom('fil_files')
      .select(['fil_file_id', 'fil_usr_user_id', 'fil_source', 'fil_name', 'fil_fol_folder_id'])
      .where('fil_file_id', 'in', data.attachments.map((a: { file_id: number }) => a.file_id))
      .orderBy('fil_file_id')
      .execute();
    expect(rows.map((r) => [r.fil_usr_user_id, r.fil_source, r.fil_name, r.fil_fol_folder_id])).toEqual([
      [member.userId, 'assistant_attachment', 'notes.txt', null],
      [member.userId, 'assistant_attachment', 'photo.png', null],
    ]);
    expect((await blobBytes(t.services.db, rows[0]!.fil_file_id)).toString('utf8')).toBe(notes);
    expect(await blobBytes(t.services.db, rows[1]!.fil_file_id)).toEqual(png);

    // The thread holds the member's message (answered, with its files) and the reply.
    const read = await thread(member.headers, data.conversation_id);
    expect(read.statusCode).toBe(200);
    expect(read.json.data.conversation).toMatchObject({ id: data.conversation_id, title: 'What is in these files?' });
    expect(read.json.data.messages.map((m: Record<string, unknown>) => [m.id, m.role, m.body, m.status, m.failure])).toEqual([
      [data.user_message_id, 'user', 'What is in these files?', 'answered', null],
      [data.message_id, 'assistant', 'fake reply 1', 'complete', null],
    ]);
    expect(read.json.data.messages[0].attachments).toEqual(data.attachments);
  });

  it('a follow-up with conversation_id sends the conversation history, oldest first', async () => {
    const member = await t.keyHeaders();
    const first = await send(member.headers, { message: 'First question' }, [{ filename: 'a.md', type: 'text/markdown', content: '# A' }]);
    expect(first.statusCode).toBe(200);
    const id = first.json.data.conversation_id;
    const second = await send(member.headers, { message: 'Second question', conversation_id: String(id) });
    expect(second.statusCode).toBe(200);
    expect(second.json.data).toMatchObject({ conversation_id: id, reply: 'fake reply 2' });
    expect(fake.seen[1]!.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'First question' }, { type: 'text', text: 'Attachment 1: a.md (text/markdown, 3 bytes)\n# A' }] },
      { role: 'assistant', content: 'fake reply 1' },
      { role: 'user', content: 'Second question' },
    ]);
    const read = await thread(member.headers, id);
    expect(read.json.data.messages.map((m: { role: string; body: string }) => `${m.role}:${m.body}`)).toEqual([
      'user:First question',
      'assistant:fake reply 1',
      'user:Second question',
      'assistant:fake reply 2',
    ]);
  });

  it('history beyond assistant_max_request_bytes leaves out the oldest turns, never the new message', async () => {
    const member = await t.keyHeaders();
    const first = await send(member.headers, { message: 'x'.repeat(900) });
    const id = first.json.data.conversation_id;
    await send(member.headers, { message: 'short two', conversation_id: String(id) });
    await t.services.settings.set('assistant_max_request_bytes', 1024);
    const third = await send(member.headers, { message: 'short three', conversation_id: String(id) });
    expect(third.statusCode).toBe(200);
    const sent = fake.seen[2]!;
    expect(sent.body.messages).toEqual([
      { role: 'assistant', content: 'fake reply 1' },
      { role: 'user', content: 'short two' },
      { role: 'assistant', content: 'fake reply 2' },
      { role: 'user', content: 'short three' },
    ]);
  });

  it.each([
    ['timeout', 'hang' as const, 'timeout'],
    ['a 500 answer', 'status500' as const, 'http_status'],
    ['an answer without choices', 'malformed' as const, 'malformed'],
  ])('a provider %s is 502 provider_unavailable, and the message is stored failed without a reply', async (_label, behaviour, failure) => {
    await t.services.settings.set('assistant_timeout_ms', 200);
    const member = await t.keyHeaders();
    const ok = await send(member.headers, { message: 'hello' });
    const id = ok.json.data.conversation_id;
    fake.behaviour = behaviour;
    const res = await send(member.headers, { message: 'are you there?', conversation_id: String(id) }, [{ filename: 'n.txt', type: 'text/plain', content: 'kept' }]);
    expect(res.statusCode).toBe(502);
    expect(res.json.errortype).toBe('ActionError');
    expect(res.json.data).toEqual({ reason: 'provider_unavailable', conversation_id: id, user_message_id: expect.any(Number) });
    expect(fake.seen).toHaveLength(2);

    const read = await thread(member.headers, id);
    const messages = read.json.data.messages;
    expect(messages.map((m: Record<string, unknown>) => [m.role, m.body, m.status, m.failure])).toEqual([
      ['user', 'hello', 'answered', null],
      ['assistant', 'fake reply 1', 'complete', null],
      ['user', 'are you there?', 'failed', failure],
    ]);
    expect(messages[2].id).toBe(res.json.data.user_message_id);
    // Its files are not kept (issue 35: nothing counted them): the file row is deleted and holds no blob.
    expect(messages[2].attachments).toEqual([]);
    const files = await t.services.db
      .selectFrom('fil_files')
      .select(['fil_delete_time', 'fil_fbb_file_blob_id'])
      .where('fil_usr_user_id', '=', member.userId)
      .where('fil_source', '=', 'assistant_attachment')
      .execute();
    expect(files).toEqual([{ fil_delete_time: expect.any(Date), fil_fbb_file_blob_id: null }]);

    // A failed message got no answer and is not history for the next one.
    fake.behaviour = 'reply';
    const next = await send(member.headers, { message: 'again', conversation_id: String(id) });
    expect(next.statusCode).toBe(200);
    expect(fake.seen[2]!.body.messages.map((m) => m.content)).toEqual(['hello', 'fake reply 1', 'again']);
  });

  it('a provider that cannot be reached is 502 provider_unavailable (network)', async () => {
    const closed = new FakeProvider();
    const base = await closed.start();
    await closed.stop();
    await t.services.settings.set('assistant_api_base', base);
    try {
      const member = await t.keyHeaders();
      const res = await send(member.headers, { message: 'anyone?' });
      expect(res.statusCode).toBe(502);
      expect(res.json.data.reason).toBe('provider_unavailable');
      const read = await thread(member.headers, res.json.data.conversation_id);
      expect(read.json.data.messages.map((m: Record<string, unknown>) => [m.status, m.failure])).toEqual([['failed', 'network']]);
    } finally {
      await t.services.settings.set('assistant_api_base', baseUrl);
    }
  });

  it('refuses more files, a larger file, a longer message or a larger request than the settings allow, storing nothing and asking no one', async () => {
    const member = await t.keyHeaders();
    await t.services.settings.set('assistant_max_attachments', 2);
    await t.services.settings.set('assistant_max_attachment_bytes', 10);
    await t.services.settings.set('assistant_max_message_chars', 20);
    await t.services.settings.set('assistant_max_request_bytes', 1024);
    const before = await messageCount();
    const file = (name: string, content: string) => ({ filename: name, type: 'text/plain', content });

    const tooMany = await send(member.headers, { message: 'hi' }, [file('a.txt', 'a'), file('b.txt', 'b'), file('c.txt', 'c')]);
    expect(tooMany.statusCode).toBe(422);
    expect(tooMany.json.errortype).toBe('ValidationError');
    expect(tooMany.json.validation_errors).toEqual({ attachments: 'at most 2 files per message (got 3)' });

    const tooBig = await send(member.headers, { message: 'hi' }, [file('big.txt', '12345678901')]);
    expect(tooBig.statusCode).toBe(422);
    expect(tooBig.json.validation_errors).toEqual({ attachments: 'big.txt is 11 bytes; each file may be at most 10 bytes' });

    const tooLong = await send(member.headers, { message: 'y'.repeat(21) });
    expect(tooLong.statusCode).toBe(422);
    expect(tooLong.json.validation_errors).toEqual({ message: 'must be at most 20 characters' });

    await t.services.settings.set('assistant_max_attachment_bytes', 4096);
    const tooMuch = await send(member.headers, { message: 'hi' }, [file('long.txt', 'z'.repeat(2000))]);
    expect(tooMuch.statusCode).toBe(422);
    expect(tooMuch.json.errortype).toBe('ValidationError');
    expect(tooMuch.json.validation_errors.attachments).toMatch(/^the message with its text files comes to \d+ bytes; the assistant takes at most 1024 per request$/);

    const blank = await send(member.headers, { message: '   ' });
    expect(blank.statusCode).toBe(422);
    expect(blank.json.validation_errors).toEqual({ message: 'must not be blank' });
    const missing = await send(member.headers, {});
    expect(missing.statusCode).toBe(422);
    expect(Object.keys(missing.json.validation_errors)).toEqual(['message']);

    expect(await messageCount()).toBe(before);
    expect(fake.seen).toHaveLength(0);
  });

  it('is refused with not_configured while no API base or model is set', async () => {
    const member = await t.keyHeaders();
    await t.services.settings.set('assistant_model', '');
    try {
      const before = await messageCount();
      const res = await send(member.headers, { message: 'hi' });
      expect(res.statusCode).toBe(422);
      expect(res.json.errortype).toBe('ActionError');
      expect(res.json.data).toEqual({ reason: 'not_configured' });
      expect(await messageCount()).toBe(before);
    } finally {
      await t.services.settings.set('assistant_model', MODEL);
    }
  });

  it('with an Idempotency-Key a retry replays the answer without asking again; after a 502 the key is free for a real retry', async () => {
    const member = await t.keyHeaders();
    const body = multipartBody({ message: 'once' }, [{ filename: 'o.txt', type: 'text/plain', content: 'once' }]);
    const headers = { ...member.headers, ...body.headers, 'idempotency-key': 'chat-once-1' };
    const first = await t.request({ method: 'POST', url: '/api/v1/action/assistant/chat_send', headers, payload: body.payload });
    const again = await t.request({ method: 'POST', url: '/api/v1/action/assistant/chat_send', headers, payload: body.payload });
    expect(first.statusCode).toBe(200);
    expect(again.statusCode).toBe(200);
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(again.json.data).toEqual(first.json.data);
    expect(fake.seen).toHaveLength(1);

    fake.behaviour = 'status500';
    const failHeaders = { ...headers, 'idempotency-key': 'chat-once-2' };
    const failed = await t.request({ method: 'POST', url: '/api/v1/action/assistant/chat_send', headers: failHeaders, payload: body.payload });
    expect(failed.statusCode).toBe(502);
    fake.behaviour = 'reply';
    const retried = await t.request({ method: 'POST', url: '/api/v1/action/assistant/chat_send', headers: failHeaders, payload: body.payload });
    expect(retried.statusCode).toBe(200);
    expect(retried.headers['idempotency-replayed']).toBeUndefined();
    expect(fake.seen).toHaveLength(3);
  });

  it('needs a signed-in member: no key headers is refused', async () => {
    const body = multipartBody({ message: 'hi' });
    const res = await t.request({ method: 'POST', url: '/api/v1/action/assistant/chat_send', headers: body.headers, payload: body.payload });
    expect(res.statusCode).toBe(400);
    expect(res.json.errortype).toBe('AuthenticationError');
    expect(fake.seen).toHaveLength(0);
  });
});

describe('conversations are their owner\'s', () => {
  it('another member reads or continues a conversation exactly as one that does not exist', async () => {
    const owner = await t.keyHeaders();
    const other = await t.keyHeaders();
    const sent = await send(owner.headers, { message: 'mine' });
    const id = sent.json.data.conversation_id;

    const theirs = await thread(other.headers, id);
    const unknown = await thread(other.headers, id + 100000);
    expect(theirs.statusCode).toBe(422);
    expect(theirs.json.errortype).toBe('ActionError');
    expect(theirs.json.data).toEqual({ reason: 'not_found' });
    expect(theirs.json).toEqual(unknown.json);

    const before = await messageCount();
    const cont = await send(other.headers, { message: 'let me in', conversation_id: String(id) });
    const contUnknown = await send(other.headers, { message: 'let me in', conversation_id: String(id + 100000) });
    expect(cont.statusCode).toBe(422);
    expect(cont.json).toEqual(contUnknown.json);
    expect(await messageCount()).toBe(before);
    expect(fake.seen).toHaveLength(1);

    // The owner still reads it.
    expect((await thread(owner.headers, id)).statusCode).toBe(200);
  });
});

describe('the API key stays secret', () => {
  it('never appears in a response, a log line or the settings snapshot', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString('utf8'));
        cb();
      },
    });
    const logged = await buildApp(t.services, { logger: { level: 'trace', stream: sink } });
    await logged.ready();
    try {
      const member = await t.keyHeaders();
      const bodies: string[] = [];
      const call = async (fields: Record<string, string>) => {
        const body = multipartBody(fields, [{ filename: 'k.txt', type: 'text/plain', content: 'key?' }]);
        const res = await logged.inject({ method: 'POST', url: '/api/v1/action/assistant/chat_send', headers: { ...member.headers, ...body.headers }, payload: body.payload });
        bodies.push(res.body, JSON.stringify(res.headers));
        return res;
      };
      const ok = await call({ message: 'hello' });
      expect(ok.statusCode).toBe(200);
      fake.behaviour = 'status500';
      expect((await call({ message: 'fail please' })).statusCode).toBe(502);
      const read = await logged.inject({ method: 'POST', url: '/api/v1/action/assistant/chat_thread', headers: member.headers, payload: { conversation_id: ok.json().data.conversation_id } });
      bodies.push(read.body);

      // The provider did get it, and the failure was logged: the log is not simply empty.
      expect(fake.seen.every((s) => s.headers.authorization === `Bearer ${API_KEY}`)).toBe(true);
      expect(lines.some((l) => l.includes('assistant provider unavailable') && l.includes('http_status'))).toBe(true);
      for (const text of [...bodies, ...lines]) expect(text).not.toContain(API_KEY);
      const snapshot = t.services.settings.snapshot().find((s) => s.name === 'assistant_api_key');
      expect(snapshot).toEqual({ name: 'assistant_api_key', value: '(set)', secret: true });
    } finally {
      await logged.close();
    }
  });
});

describe('while the plugin is inactive', () => {
  afterEach(async () => {
    await t.services.plugins.setActive('assistant', true);
  });

  it('both actions answer 404 like an unknown action, and discovery does not list them', async () => {
    const member = await t.keyHeaders();
    const sent = await send(member.headers, { message: 'before' });
    expect(sent.statusCode).toBe(200);
    await t.services.plugins.setActive('assistant', false);

    const unknown = await t.request({ method: 'POST', url: '/api/v1/action/assistant/nothing', headers: member.headers, payload: {} });
    expect(unknown.statusCode).toBe(404);
    const chat = await send(member.headers, { message: 'after' });
    const read = await thread(member.headers, sent.json.data.conversation_id);
    for (const res of [chat, read]) {
      expect(res.statusCode).toBe(404);
      expect(res.json.errortype).toBe(unknown.json.errortype);
    }
    const listed = await t.request({ method: 'GET', url: '/api/v1/actions' });
    expect(Object.keys(listed.json.data).filter((n) => n.startsWith('assistant/'))).toEqual([]);
    expect(fake.seen).toHaveLength(1);

    await t.services.plugins.setActive('assistant', true);
    const again = await t.request({ method: 'GET', url: '/api/v1/actions' });
    expect(Object.keys(again.json.data).filter((n) => n.startsWith('assistant/')).sort()).toEqual(['assistant/chat_send', 'assistant/chat_thread']);
  });
});
