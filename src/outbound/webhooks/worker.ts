import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { formatTimestamp } from '../../lib/time.js';
import { mailerFromSettings, type Mailer } from '../../mail/mailer.js';
import type { Settings } from '../../settings/store.js';
import { recordEvent } from '../events.js';
import { ALLOW_PRIVATE_SETTING } from './endpoints.js';
import { DELIVERY_TIMEOUT_MS, postWebhook, type PostOutcome } from './post.js';
import { parseRetryAfter, retryDelaySeconds } from '../retry-schedule.js';
import { SecretBox } from './secrets.js';
import { webhookHeaders } from './signing.js';
import { checkTarget, systemResolver, type Resolver } from './targets.js';

/** An endpoint whose every attempt has failed this long is disabled (DESIGN 15). */
export const FAILING_DISABLE_SECONDS = 5 * 24 * 3600;
/**
 * A claim moves a delivery this far ahead: longer than an attempt may take, so no other worker takes it
 * while it is in flight, and short, so a crashed worker's claim comes due again soon.
 */
export const CLAIM_LEASE_SECONDS = 30;

export interface WebhookWorkerDeps {
  db: Kysely<DB>;
  clock: Clock;
  settings: Settings;
  /** How the superadmins are told that an endpoint was disabled (default: the service's mailer). */
  mailer?: Mailer;
  resolve?: Resolver;
  log?: { warn(obj: Record<string, unknown>, msg: string): void };
  /** Deliveries claimed (and sent in parallel) at once. */
  batchSize?: number;
  timeoutMs?: number;
}

export interface DeliveryRunReport {
  claimed: number;
  succeeded: number;
  failed: number;
  disabled: number;
}

interface Claimed {
  whd_webhook_delivery_id: number;
  whd_attempt_count: number;
  whe_webhook_endpoint_id: number;
  whe_url: string;
  whe_secret_sealed: string;
  whe_previous_secret_sealed: string | null;
  whe_previous_secret_expires_time: Date | null;
  obe_uid: string;
  obe_payload: unknown;
}

/**
 * Sends due deliveries, on every node: a claim (FOR UPDATE SKIP LOCKED, then the delivery's due time moved
 * a lease ahead) is committed before the HTTP call, so two workers never hold one delivery at once and a
 * worker killed mid-call leaves it due again when the lease runs out. The outcome is written in a second
 * transaction, only while the claim is still ours.
 */
export class WebhookWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private box: SecretBox | undefined;

  constructor(private readonly deps: WebhookWorkerDeps) {}

  /** Sends everything due now (batch after batch, at most `maxBatches`), and reports what happened. */
  async runDueDeliveries(maxBatches = 20): Promise<DeliveryRunReport> {
    const report: DeliveryRunReport = { claimed: 0, succeeded: 0, failed: 0, disabled: 0 };
    const size = this.deps.batchSize ?? 20;
    for (let i = 0; i < maxBatches; i++) {
      const { token, claimed } = await this.claim(size);
      report.claimed += claimed.length;
      const outcomes = await Promise.all(claimed.map((c) => this.attempt(c, token)));
      for (const o of outcomes) {
        if (o.ok) report.succeeded++;
        else report.failed++;
        if (o.disabled) report.disabled++;
      }
      if (claimed.length < size) break;
    }
    return report;
  }

  /** Wakes every `intervalMs` (a second by default) and sends what is due; one run at a time. */
  start(intervalMs = 1000): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.runDueDeliveries()
        .catch((e: unknown) => this.deps.log?.warn({ err: e instanceof Error ? e.message : String(e) }, 'webhook delivery run failed'))
        .finally(() => (this.running = undefined));
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private async claim(limit: number): Promise<{ token: string; claimed: Claimed[] }> {
    const token = randomBytes(12).toString('base64url');
    const now = this.deps.clock.now();
    const leaseEnd = new Date(now.getTime() + CLAIM_LEASE_SECONDS * 1000);
    const claimed = await this.deps.db.transaction().execute(async (trx) => {
      const ids = await sql<{ whd_webhook_delivery_id: number }>`
        update whd_webhook_deliveries set whd_next_attempt_time = ${leaseEnd}, whd_claim_token = ${token}
        where whd_webhook_delivery_id in (
          select whd_webhook_delivery_id from whd_webhook_deliveries
          join whe_webhook_endpoints on whe_webhook_endpoint_id = whd_whe_webhook_endpoint_id
          where whd_status = 'pending' and whd_next_attempt_time <= ${now} and whe_enabled
          order by whd_next_attempt_time limit ${limit}
          for update of whd_webhook_deliveries skip locked)
        returning whd_webhook_delivery_id`.execute(trx);
      if (ids.rows.length === 0) return [];
      return trx
        .selectFrom('whd_webhook_deliveries')
        .innerJoin('whe_webhook_endpoints', 'whe_webhook_endpoint_id', 'whd_whe_webhook_endpoint_id')
        .innerJoin('obe_outbound_events', 'obe_outbound_event_id', 'whd_obe_outbound_event_id')
        .select([
          'whd_webhook_delivery_id',
          'whd_attempt_count',
          'whe_webhook_endpoint_id',
          'whe_url',
          'whe_secret_sealed',
          'whe_previous_secret_sealed',
          'whe_previous_secret_expires_time',
          'obe_uid',
          'obe_payload',
        ])
        .where(
          'whd_webhook_delivery_id',
          'in',
          ids.rows.map((r) => r.whd_webhook_delivery_id),
        )
        .execute();
    });
    return { token, claimed: claimed as Claimed[] };
  }

  private async secrets(c: Claimed, now: Date): Promise<string[]> {
    this.box ??= await SecretBox.open(this.deps.db);
    const out = [this.box.open(c.whe_secret_sealed)];
    if (c.whe_previous_secret_sealed && c.whe_previous_secret_expires_time && c.whe_previous_secret_expires_time > now) {
      out.push(this.box.open(c.whe_previous_secret_sealed));
    }
    return out;
  }

  private async attempt(c: Claimed, token: string): Promise<{ ok: boolean; disabled: boolean }> {
    const now = this.deps.clock.now();
    const body = JSON.stringify(c.obe_payload);
    const target = await checkTarget(c.whe_url, this.deps.settings.bool(ALLOW_PRIVATE_SETTING), this.deps.resolve ?? systemResolver);
    let outcome: PostOutcome;
    if (!target.ok) outcome = { kind: 'failed', error: `refused: ${target.reason}`.slice(0, 255), durationMs: 0 };
    else {
      const headers = webhookHeaders(await this.secrets(c, now), c.obe_uid, Math.floor(now.getTime() / 1000), body);
      outcome = await postWebhook({ url: target.url, addresses: target.addresses, headers, body, timeoutMs: this.deps.timeoutMs ?? DELIVERY_TIMEOUT_MS });
    }
    return this.record(c, token, outcome);
  }

  private async record(c: Claimed, token: string, outcome: PostOutcome): Promise<{ ok: boolean; disabled: boolean }> {
    const { clock } = this.deps;
    const now = clock.now();
    const ok = outcome.kind === 'answered' && outcome.status >= 200 && outcome.status < 300;
    const status = outcome.kind === 'answered' ? outcome.status : null;
    const count = c.whd_attempt_count + 1;
    const retryAfter = outcome.kind === 'answered' ? parseRetryAfter(outcome.retryAfter, now.getTime()) : null;
    const delay = ok ? null : retryDelaySeconds(count, retryAfter);
    const endpointId = Number(c.whe_webhook_endpoint_id);
    const disabled = await this.deps.db.transaction().execute(async (trx) => {
      const mine = await trx
        .updateTable('whd_webhook_deliveries')
        .set({
          whd_status: ok ? 'succeeded' : delay === null ? 'failed' : 'pending',
          whd_attempt_count: count,
          whd_last_attempt_time: now,
          whd_last_status_code: status,
          whd_claim_token: null,
          whd_update_time: now,
          ...(delay !== null ? { whd_next_attempt_time: new Date(now.getTime() + delay * 1000) } : {}),
        })
        .where('whd_webhook_delivery_id', '=', c.whd_webhook_delivery_id)
        .where('whd_claim_token', '=', token)
        .executeTakeFirst();
      // The claim ran out and another worker holds it now, or the endpoint was deleted: nothing to record.
      if (Number(mine.numUpdatedRows) === 0) return null;
      await trx
        .insertInto('wha_webhook_attempts')
        .values({
          wha_whd_webhook_delivery_id: c.whd_webhook_delivery_id,
          wha_whe_webhook_endpoint_id: endpointId,
          wha_attempt_time: now,
          wha_status_code: status,
          wha_duration_ms: outcome.durationMs,
          wha_response_body: outcome.kind === 'answered' ? outcome.body.slice(0, 1024) : null,
          wha_error: outcome.kind === 'failed' ? outcome.error : null,
        })
        .execute();
      if (ok) {
        await trx.updateTable('whe_webhook_endpoints').set({ whe_failing_since_time: null }).where('whe_webhook_endpoint_id', '=', endpointId).where('whe_failing_since_time', 'is not', null).execute();
        return null;
      }
      const endpoint = await trx
        .updateTable('whe_webhook_endpoints')
        .set({ whe_failing_since_time: sql`coalesce(whe_failing_since_time, ${now})` })
        .where('whe_webhook_endpoint_id', '=', endpointId)
        .returning(['whe_failing_since_time', 'whe_enabled', 'whe_url'])
        .executeTakeFirst();
      if (!endpoint?.whe_enabled) return null;
      const since = endpoint.whe_failing_since_time ?? now;
      const reason = status === 410 ? 'gone' : now.getTime() - since.getTime() >= FAILING_DISABLE_SECONDS * 1000 ? 'failing' : null;
      if (!reason) return null;
      await trx.updateTable('whe_webhook_endpoints').set({ whe_enabled: false, whe_disabled_reason: reason, whe_update_time: now }).where('whe_webhook_endpoint_id', '=', endpointId).execute();
      const data = { endpoint_id: endpointId, url: endpoint.whe_url, reason, failing_since: formatTimestamp(since), last_status_code: status };
      await recordEvent(trx, clock, 'webhook.endpoint_disabled', data);
      return data;
    });
    if (disabled) await this.tellSuperadmins(disabled);
    return { ok, disabled: disabled !== null };
  }

  /** Mail goes after the commit: a rolled-back disable tells no one. A mail failure is logged, not retried. */
  private async tellSuperadmins(d: { endpoint_id: number; url: string; reason: string; failing_since: string; last_status_code: number | null }): Promise<void> {
    const { db, settings, clock } = this.deps;
    const admins = await db
      .selectFrom('usr_users')
      .select('usr_email')
      .where('usr_permission', '>=', 10)
      .where('usr_delete_time', 'is', null)
      .where('usr_is_disabled', '=', false)
      .execute();
    const mailer = this.deps.mailer ?? mailerFromSettings(settings, db, clock);
    const why =
      d.reason === 'gone'
        ? 'it answered 410 Gone, which means the receiver no longer wants these events'
        : `every delivery to it has failed since ${d.failing_since} UTC (5 days)`;
    const site = settings.string('site_name');
    for (const admin of admins) {
      try {
        await mailer.send({
          to: admin.usr_email,
          subject: `${site}: webhook endpoint ${d.endpoint_id} disabled`,
          text: `The webhook endpoint ${d.url} (id ${d.endpoint_id}) was disabled: ${why}.\n\nEvents are no longer sent to it. Once the receiver works again, enable it on /admin/webhooks and redeliver the failures since ${d.failing_since}.\n`,
          template: 'webhook_endpoint_disabled',
        });
      } catch (e) {
        this.deps.log?.warn({ endpoint_id: d.endpoint_id, err: e instanceof Error ? e.message : String(e) }, 'could not mail a superadmin about a disabled webhook endpoint');
      }
    }
  }
}
