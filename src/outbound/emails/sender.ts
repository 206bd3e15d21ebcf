import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { mailerFromSettings, OutboxMailer } from '../../mail/mailer.js';
import type { Settings } from '../../settings/store.js';
import { loadTemplates } from './template-store.js';
import { isMemberEmailKey, renderEmail, type PlaceholderValues } from './templates.js';
import { retryDelaySeconds } from '../retry-schedule.js';

export interface SenderLog {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface MemberEmailSenderDeps {
  db: Kysely<DB>;
  clock: Clock;
  settings: Settings;
  /** BASE_URL: the links in the emails. */
  baseUrl: string;
  /** Jitter of the retry delays (tests pin it). */
  random?: () => number;
}

/** How long a claimed email is left to its node before another may take it (the node may have died mid-send). */
export const CLAIM_LEASE_MS = 10 * 60 * 1000;
/** Emails claimed per round. */
const BATCH = 20;
/** How often the worker looks for due emails. */
const POLL_MS = 2000;

export interface SendRound {
  sent: number;
  skipped: number;
  retrying: number;
  failed: number;
}

type Claimed = { id: number; template: string; userId: number; to: string; attempts: number; eventRowId: number | null; data: unknown };

/**
 * Sends queued member emails (mem_member_emails). Runs on every node: a round claims due rows with
 * FOR UPDATE SKIP LOCKED and commits the claim (a lease) before sending, so two nodes never send one
 * email at once and a node that dies mid-send leaves it to another after the lease. Through the outbox
 * (no SMTP configured) the outbox row and the email's "sent" are written in one transaction.
 */
export class MemberEmailSender {
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<unknown> | undefined;
  private log: SenderLog | undefined;

  constructor(private readonly deps: MemberEmailSenderDeps) {}

  /** Starts the worker (the server process of each node); failures are logged to `log`. */
  start(log?: SenderLog): void {
    if (this.timer) return;
    this.log = log;
    this.timer = setInterval(() => {
      if (this.round) return;
      this.round = this.sendDue()
        .catch((err) => this.log?.error({ err }, 'member emails: sending round failed'))
        .finally(() => (this.round = undefined));
    }, POLL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.round;
  }

  /** Claims and sends every email due now, batch by batch; what became of them. */
  async sendDue(): Promise<SendRound> {
    const total: SendRound = { sent: 0, skipped: 0, retrying: 0, failed: 0 };
    for (;;) {
      const claimed = await this.claim();
      for (const email of claimed) total[await this.sendOne(email)]++;
      if (claimed.length < BATCH) return total;
    }
  }

  private async claim(): Promise<Claimed[]> {
    const { db, clock } = this.deps;
    return db.transaction().execute(async (trx) => {
      const now = clock.now();
      const rows = await trx
        .selectFrom('mem_member_emails')
        .select(['mem_member_email_id', 'mem_template', 'mem_usr_user_id', 'mem_to', 'mem_attempts', 'mem_obe_outbound_event_id', 'mem_data'])
        .where('mem_status', '=', 'pending')
        .where('mem_next_attempt_time', '<=', now)
        .orderBy('mem_next_attempt_time')
        .orderBy('mem_member_email_id')
        .limit(BATCH)
        .forUpdate()
        .skipLocked()
        .execute();
      if (rows.length === 0) return [];
      await trx
        .updateTable('mem_member_emails')
        .set((eb) => ({ mem_attempts: eb('mem_attempts', '+', 1), mem_next_attempt_time: new Date(now.getTime() + CLAIM_LEASE_MS) }))
        .where('mem_member_email_id', 'in', rows.map((r) => r.mem_member_email_id))
        .execute();
      return rows.map((r) => ({
        id: Number(r.mem_member_email_id),
        template: r.mem_template,
        userId: Number(r.mem_usr_user_id),
        to: r.mem_to,
        attempts: r.mem_attempts + 1,
        eventRowId: r.mem_obe_outbound_event_id === null ? null : Number(r.mem_obe_outbound_event_id),
        data: r.mem_data,
      }));
    });
  }

  private async sendOne(email: Claimed): Promise<'sent' | 'skipped' | 'retrying' | 'failed'> {
    const { db, clock, settings } = this.deps;
    const templates = await loadTemplates(db);
    const template = templates.find((t) => t.key === email.template);
    const welcomeOff = email.template === 'welcome' && !settings.bool('email_welcome_active');
    const values = template && !welcomeOff && template.active ? await this.values(email) : null;
    if (!template || !values) {
      await this.finish(db, email.id, 'skipped');
      return 'skipped';
    }
    const rendered = renderEmail(template, values);
    const message = { to: email.to, subject: rendered.subject, text: rendered.text, html: rendered.html, template: email.template };
    try {
      const mailer = mailerFromSettings(settings, db, clock);
      if (mailer instanceof OutboxMailer) {
        // Kept in the outbox: the message and the email's "sent" in one transaction, so exactly once.
        await db.transaction().execute(async (trx) => {
          await mailerFromSettings(settings, trx, clock).send(message);
          await this.finish(trx, email.id, 'sent');
        });
      } else {
        await mailer.send(message);
        await this.finish(db, email.id, 'sent');
      }
      return 'sent';
    } catch (err) {
      const delaySeconds = retryDelaySeconds(email.attempts, null, this.deps.random);
      const delay = delaySeconds === null ? null : Math.round(delaySeconds * 1000);
      const error = (err instanceof Error ? err.message : String(err)).slice(0, 500);
      this.log?.warn({ err, email: email.id, template: email.template, attempts: email.attempts }, 'member email: sending failed');
      if (delay === null) {
        await this.finish(db, email.id, 'failed', error);
        return 'failed';
      }
      await db
        .updateTable('mem_member_emails')
        .set({ mem_next_attempt_time: new Date(clock.nowMs() + delay), mem_last_error: error })
        .where('mem_member_email_id', '=', email.id)
        .execute();
      return 'retrying';
    }
  }

  private async finish(db: Kysely<DB>, id: number, status: 'sent' | 'skipped' | 'failed', error: string | null = null): Promise<void> {
    await db
      .updateTable('mem_member_emails')
      .set({ mem_status: status, mem_sent_time: status === 'sent' ? this.deps.clock.now() : null, mem_last_error: error })
      .where('mem_member_email_id', '=', id)
      .execute();
  }

  /** The placeholders of one email; null when its member is gone (nothing is sent to a deleted member). */
  private async values(email: Claimed): Promise<PlaceholderValues | null> {
    const { db, settings, baseUrl } = this.deps;
    if (!isMemberEmailKey(email.template)) return null;
    const user = await db
      .selectFrom('usr_users')
      .select(['usr_first_name', 'usr_last_name', 'usr_delete_time'])
      .where('usr_user_id', '=', email.userId)
      .executeTakeFirst();
    if (!user || user.usr_delete_time !== null) return null;
    let data: Record<string, unknown> = isRecord(email.data) ? email.data : {};
    if (email.eventRowId !== null) {
      const event = await db.selectFrom('obe_outbound_events').select('obe_payload').where('obe_outbound_event_id', '=', email.eventRowId).executeTakeFirst();
      const payload = event?.obe_payload;
      if (isRecord(payload) && isRecord(payload.data)) data = payload.data;
    }
    const fromSubscription = await subscriptionFacts(db, data);
    return {
      site_name: settings.string('site_name'),
      site_url: baseUrl,
      subscription_url: `${baseUrl}/profile/subscription`,
      first_name: user.usr_first_name,
      last_name: user.usr_last_name ?? '',
      email: email.to,
      product_name: pick(data, ['product_name', 'product.name', 'product']) || fromSubscription.product_name,
      tier_name: pick(data, ['tier_name', 'tier.name', 'tier.display_name', 'tier']) || fromSubscription.tier_name,
      period_end: asDate(pick(data, ['period_end', 'subscription.period_end', 'current_period_end'])) || fromSubscription.period_end,
    };
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The first string or number found at one of the dotted paths, as text. */
function pick(data: Record<string, unknown>, paths: string[]): string {
  for (const path of paths) {
    let v: unknown = data;
    for (const part of path.split('.')) v = isRecord(v) ? v[part] : undefined;
    if (typeof v === 'string' && v !== '') return v;
    if (typeof v === 'number') return String(v);
  }
  return '';
}

/** '2026-04-01 12:00:00' (the contract's format) reads as 2026-04-01 in a mail. */
function asDate(value: string): string {
  return /^\d{4}-\d{2}-\d{2}[ T]/.test(value) ? value.slice(0, 10) : value;
}

/** The product, tier and period end of the subscription (order item) an event names, when it names one. */
async function subscriptionFacts(db: Kysely<DB>, data: Record<string, unknown>): Promise<{ product_name: string; tier_name: string; period_end: string }> {
  const none = { product_name: '', tier_name: '', period_end: '' };
  const id = Number(pick(data, ['order_item_id', 'subscription.order_item_id', 'odi_order_item_id']));
  if (!Number.isSafeInteger(id) || id <= 0) return none;
  const row = await db
    .selectFrom('odi_order_items')
    .innerJoin('pro_products', 'pro_products.pro_product_id', 'odi_order_items.odi_pro_product_id')
    .leftJoin('sbt_subscription_tiers', 'sbt_subscription_tiers.sbt_subscription_tier_id', 'pro_products.pro_sbt_subscription_tier_id')
    .select(['pro_products.pro_name', 'sbt_subscription_tiers.sbt_display_name', 'odi_order_items.odi_subscription_period_end'])
    .where('odi_order_items.odi_order_item_id', '=', id)
    .executeTakeFirst();
  if (!row) return none;
  return {
    product_name: row.pro_name,
    tier_name: row.sbt_display_name ?? '',
    period_end: row.odi_subscription_period_end ? row.odi_subscription_period_end.toISOString().slice(0, 10) : '',
  };
}
