import type { PGlite } from '@electric-sql/pglite';
import type { Kysely } from 'kysely';
import type { ChangeFeedHandlers } from './change-feed.js';
import { assertPlainIdentifier } from './identifier.js';
import type { DB } from './types.js';

type Listener = (payload: string) => void;

/** Per embedded database, per channel: the feeds listening (for notifications found in socket traffic). */
const listening = new WeakMap<PGlite, Map<string, Set<Listener>>>();

/**
 * A notification found in the bytes going to a socket client (see NotificationTap): delivered to this
 * process's feeds on its channel. Returns whether any feed listens there (the client then need not see it).
 */
export function deliverSocketNotification(pglite: PGlite, channel: string, payload: string): boolean {
  const listeners = listening.get(pglite)?.get(channel);
  if (!listeners || listeners.size === 0) return false;
  for (const listener of listeners) listener(payload);
  return true;
}

/**
 * LISTEN on one channel of the embedded database, in its one session: notifications raised by this
 * process's own statements arrive through PGlite's listener (while the statement completes); those
 * raised by a socket client's statements arrive through deliverSocketNotification. Live once the LISTEN
 * has run, until stopped.
 */
export class PGliteChangeFeed {
  private unlisten: (() => Promise<void>) | undefined;
  private stopped = false;
  private readonly listener: Listener;

  constructor(
    private readonly pglite: PGlite,
    private readonly db: Kysely<DB>,
    private readonly channel: string,
    private readonly handlers: ChangeFeedHandlers,
  ) {
    assertPlainIdentifier(channel, 'not a channel name');
    this.listener = (payload) => {
      if (!this.stopped) this.handlers.changed(payload);
    };
  }

  start(): void {
    void this.listen();
  }

  private async listen(): Promise<void> {
    try {
      // On the Kysely connection, so that the LISTEN never lands inside a transaction of this process
      // (a rollback would undo it).
      this.unlisten = await this.db.connection().execute(() => this.pglite.listen(this.channel, this.listener));
    } catch {
      return; // not live: every read goes to the database
    }
    if (this.stopped) return void (await this.quiet());
    let byChannel = listening.get(this.pglite);
    if (!byChannel) listening.set(this.pglite, (byChannel = new Map()));
    let listeners = byChannel.get(this.channel);
    if (!listeners) byChannel.set(this.channel, (listeners = new Set()));
    listeners.add(this.listener);
    this.handlers.live(true);
  }

  /**
   * Stops delivering, at once. The UNLISTEN is not waited for: it would wait for the connection, which a
   * socket client's open transaction may hold while the server shuts down. (Should it land inside a
   * transaction that rolls back, the session keeps listening with no listener: harmless.)
   */
  private async quiet(): Promise<void> {
    listening.get(this.pglite)?.get(this.channel)?.delete(this.listener);
    const unlisten = this.unlisten;
    this.unlisten = undefined;
    if (unlisten && !this.pglite.closed) void unlisten().catch(() => {});
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.handlers.live(false);
    await this.quiet();
  }
}
