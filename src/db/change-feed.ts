import pg from 'pg';
import { assertPlainIdentifier } from './identifier.js';

/**
 * The channel the row-change triggers (migrations 0028 and 0043) notify on every write, by any process, to a table
 * whose rows servers cache: the payload is '<table>:<primary key>', or '<table>' for a truncate.
 */
export const ROW_CHANGES = 'gatehouse_changes';

export interface ChangeFeedHandlers {
  /** A notification arrived on the channel. */
  changed(payload: string): void;
  /**
   * Whether notifications are being received: false from the moment the connection fails (writes made
   * meanwhile go unseen) until it is back and listening again.
   */
  live(isLive: boolean): void;
}

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;

/**
 * LISTEN on one channel over a PostgreSQL connection of its own (a pooled one cannot hold a LISTEN),
 * reconnecting with backoff when it fails.
 */
export interface Feed {
  start(): void;
  stop(): Promise<void>;
}

export class ChangeFeed implements Feed {
  private client: pg.Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private retryMs = FIRST_RETRY_MS;
  private stopped = false;

  constructor(
    private readonly url: string,
    private readonly channel: string,
    private readonly handlers: ChangeFeedHandlers,
  ) {
    assertPlainIdentifier(channel, 'not a channel name');
  }

  start(): void {
    void this.connect();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    let lost = false;
    const onLost = () => {
      if (lost) return;
      lost = true;
      this.lose(client);
    };
    client.on('error', onLost);
    client.on('end', onLost);
    client.on('notification', (message) => {
      if (message.channel === this.channel) this.handlers.changed(message.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`listen ${this.channel}`);
    } catch {
      onLost();
      return;
    }
    if (this.stopped || lost) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.retryMs = FIRST_RETRY_MS;
    this.handlers.live(true);
  }

  private lose(client: pg.Client): void {
    if (this.client === client) this.client = undefined;
    this.handlers.live(false);
    client.end().catch(() => {});
    if (this.stopped) return;
    this.retry = setTimeout(() => void this.connect(), this.retryMs);
    this.retry.unref();
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.handlers.live(false);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
