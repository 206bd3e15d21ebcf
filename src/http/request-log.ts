import type { Kysely } from 'kysely';
import type { DB } from '../db/types.js';

/** One API request as the request log keeps it: never secrets, passwords or bodies. */
export interface RequestLogEntry {
  feature: string;
  action: string | null;
  ip: string;
  userId: number | null;
  keyType: string | null;
  success: boolean;
  status: number;
  errorType: string | null;
  responseMs: number;
  at: Date;
}

const MAX_BUFFER = 10_000;

/** Buffers entries and writes them in batches, off the request path; flush() on shutdown. */
export class RequestLog {
  private buffer: RequestLogEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  dropped = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly opts: { batchSize?: number; intervalMs?: number; onError?: (e: unknown) => void } = {},
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.opts.intervalMs ?? 1000);
    this.timer.unref();
  }

  add(entry: RequestLogEntry): void {
    if (this.buffer.length >= MAX_BUFFER) {
      this.dropped++;
      return;
    }
    this.buffer.push(entry);
    if (this.buffer.length >= (this.opts.batchSize ?? 200)) void this.flush();
  }

  /** Writes everything buffered so far; concurrent calls queue behind each other. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.writeBuffered());
    return this.flushing;
  }

  private async writeBuffered(): Promise<void> {
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, 500);
      try {
        await this.db
          .insertInto('rql_request_logs')
          .values(
            batch.map((e) => ({
              rql_feature: e.feature.slice(0, 50),
              rql_action: e.action?.slice(0, 100) ?? null,
              rql_ip_address: e.ip.slice(0, 45),
              rql_usr_user_id: e.userId,
              rql_api_key_type: e.keyType,
              rql_was_success: e.success,
              rql_status_code: e.status,
              rql_error_type: e.errorType,
              rql_response_ms: Math.round(e.responseMs),
              rql_create_time: e.at,
            })),
          )
          .execute();
      } catch (e) {
        this.opts.onError?.(e);
      }
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
