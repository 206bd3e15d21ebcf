/** What a tap does with a notification it found: true to take it out of the client's stream. */
export type NotificationSink = (channel: string, payload: string) => boolean;

const NOTIFICATION_RESPONSE = 0x41; // 'A'
const HEADER = 5; // type byte and int32 length (which counts itself)

/**
 * Reads a PostgreSQL backend's output as it streams to a client (in chunks cut anywhere), finds the
 * NotificationResponse messages in it and hands each to `sink`; those the sink takes are left out of what
 * reaches the client, every other byte passes through unchanged and in order.
 *
 * The embedded database is one session: the server's LISTEN is that session's, so a notification raised
 * by a socket client's write arrives in the bytes going to that client, not to the server's listener.
 */
export class NotificationTap {
  /** The current message's first bytes, while its header or (for a notification) its body is incomplete. */
  private held: Buffer = Buffer.alloc(0);
  /** Bytes of a passed-through message still to come. */
  private passing = 0;

  constructor(private readonly sink: NotificationSink) {}

  /** The part of `chunk` the client gets. */
  filter(chunk: Uint8Array): Uint8Array {
    const out: Uint8Array[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (this.passing > 0) {
        const n = Math.min(this.passing, chunk.length - at);
        out.push(chunk.subarray(at, at + n));
        this.passing -= n;
        at += n;
        continue;
      }
      // A message starts (or its header was cut): gather the header.
      if (this.held.length < HEADER) {
        const n = Math.min(HEADER - this.held.length, chunk.length - at);
        this.held = Buffer.concat([this.held, chunk.subarray(at, at + n)]);
        at += n;
        if (this.held.length < HEADER) break;
      }
      const total = 1 + this.held.readInt32BE(1);
      if (this.held[0] !== NOTIFICATION_RESPONSE) {
        out.push(this.held);
        this.passing = total - this.held.length;
        this.held = Buffer.alloc(0);
        continue;
      }
      const n = Math.min(total - this.held.length, chunk.length - at);
      this.held = Buffer.concat([this.held, chunk.subarray(at, at + n)]);
      at += n;
      if (this.held.length < total) break;
      const message = this.held;
      this.held = Buffer.alloc(0);
      if (!this.deliver(message)) out.push(message);
    }
    if (out.length === 1) return out[0]!;
    return Buffer.concat(out);
  }

  /** Int32 process id, then the channel and the payload, each a NUL-terminated string. */
  private deliver(message: Buffer): boolean {
    const channelEnd = message.indexOf(0, HEADER + 4);
    const payloadEnd = channelEnd < 0 ? -1 : message.indexOf(0, channelEnd + 1);
    if (payloadEnd < 0) return false;
    return this.sink(message.toString('utf8', HEADER + 4, channelEnd), message.toString('utf8', channelEnd + 1, payloadEnd));
  }
}
