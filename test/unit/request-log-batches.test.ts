import { describe, expect, it } from 'vitest';
import { RequestLog, copyText, type CopyRows, type RequestLogEntry } from '../../src/http/request-log.js';

/** A COPY loader that records how many rows each load carried and holds each until released. */
function recordingLoader() {
  const rowsPerStatement: number[] = [];
  const held: Array<() => void> = [];
  const copyRows: CopyRows = async (_table, _columns, text) => {
    rowsPerStatement.push(text.split('\n').length - 1);
    await new Promise<void>((release) => held.push(release));
  };
  const releaseAll = async () => {
    // Let queued writes reach the loader, then release whatever is held, until nothing is.
    for (let i = 0; i < 50; i++) {
      await new Promise((r) => setImmediate(r));
      held.splice(0).forEach((release) => release());
    }
  };
  return { copyRows, rowsPerStatement, held, releaseAll };
}

const entry = (): RequestLogEntry => ({
  feature: 'crud',
  action: 'Post:list',
  ip: '198.51.100.9',
  userId: null,
  keyType: null,
  success: true,
  status: 200,
  errorType: null,
  responseMs: 1,
  at: new Date('2026-11-24T12:00:00Z'),
});

describe('request log batches', () => {
  it('writes a batch once batchSize entries are buffered, and an entry added during that write waits for the next one', async () => {
    const { copyRows, rowsPerStatement, held, releaseAll } = recordingLoader();
    const log = new RequestLog(copyRows, { batchSize: 3 });
    for (let i = 0; i < 3; i++) log.add(entry());
    const first = log.flush();
    await new Promise((r) => setImmediate(r));
    expect(rowsPerStatement).toEqual([3]);
    log.add(entry()); // arrives while the first write is held
    expect(held).toHaveLength(1);
    held[0]!();
    await first;
    await releaseAll();
    expect(rowsPerStatement).toEqual([3]);
    const second = log.flush();
    await releaseAll();
    await second;
    expect(rowsPerStatement).toEqual([3, 1]);
  });

  it('queues one write behind a running one however many entries arrive meanwhile', async () => {
    const { copyRows, rowsPerStatement, releaseAll } = recordingLoader();
    const log = new RequestLog(copyRows, { batchSize: 2 });
    log.add(entry());
    log.add(entry()); // the first write starts with these two
    await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 7; i++) log.add(entry()); // each of these is past the batch size
    await releaseAll();
    await log.flush();
    await releaseAll();
    expect(rowsPerStatement).toEqual([2, 7]);
  });

  it('splits a large buffer into statements of at most 2000 rows', async () => {
    const { copyRows, rowsPerStatement, releaseAll } = recordingLoader();
    const log = new RequestLog(copyRows, { batchSize: 1_000_000 });
    for (let i = 0; i < 4500; i++) log.add(entry());
    const done = log.flush();
    await releaseAll();
    await done;
    expect(rowsPerStatement).toEqual([2000, 2000, 500]);
  });

  it('writes COPY text: tab-separated columns in order, \\N for null, t/f, UTC milliseconds, escaped text', () => {
    const at = new Date('2026-05-04T03:02:01.456Z');
    const text = copyText([
      { feature: 'crud', action: 'Post:read', ip: '2001:db8::7', userId: 42, keyType: 'session', success: false, status: 403, errorType: 'AuthenticationError', responseMs: 12.6, at },
      { ...entry(), action: 'a\tb\nc\\d\re', errorType: null },
    ]);
    expect(text).toBe(
      'crud\tPost:read\t2001:db8::7\t42\tsession\tf\t403\tAuthenticationError\t13\t2026-05-04 03:02:01.456\n' +
        'crud\ta\\tb\\nc\\\\d\\re\t198.51.100.9\t\\N\t\\N\tt\t200\t\\N\t1\t2026-11-24 12:00:00.000\n',
    );
  });
});
