import { describe, expect, it } from 'vitest';
import { NotificationTap } from '../../src/db/notification-tap.js';

function message(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}
const cstring = (s: string) => Buffer.from(`${s}\0`, 'utf8');
const notification = (channel: string, payload: string) => message('A', Buffer.concat([Buffer.from([0, 0, 0, 7]), cstring(channel), cstring(payload)]));

describe('NotificationTap', () => {
  const rows = message('D', Buffer.from('some row data, longer than a header'));
  const done = message('C', cstring('UPDATE 1'));
  const ready = message('Z', Buffer.from('I'));
  const ours = notification('gatehouse_changes', 'pst_posts:12');
  const theirs = notification('their_channel', 'x');
  const stream = Buffer.concat([rows, ours, done, theirs, ready]);

  it('takes the notifications its sink takes out of the stream, wherever the chunks are cut, and passes every other byte in order', () => {
    for (let cut = 1; cut <= stream.length; cut++) {
      const seen: string[] = [];
      const tap = new NotificationTap((channel, payload) => (seen.push(`${channel}|${payload}`), channel === 'gatehouse_changes'));
      const out: Buffer[] = [];
      for (let at = 0; at < stream.length; at += cut) out.push(Buffer.from(tap.filter(stream.subarray(at, at + cut))));
      expect(seen).toEqual(['gatehouse_changes|pst_posts:12', 'their_channel|x']);
      expect(Buffer.concat(out).equals(Buffer.concat([rows, done, theirs, ready])), `chunks of ${cut}`).toBe(true);
    }
  });
});
