import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { csvRecords, type CsvProgress } from '../../lib/csv.js';
import type { TierMembershipService } from '../../tiers/membership.js';
import { inTransaction } from '../../tiers/transaction.js';
import { insertImportedUsers, type ImportedUser } from '../users.js';
import { NOT_CARRIED, parseRow, readHeader, type HeaderMap, type MemberRow, type RowError } from './columns.js';
import { existingMembers, planRow, TierCatalogue, withEmailChannel, type Change, type ImportActor, type Outcome, type PlannedRow } from './plan.js';

/**
 * Links a card processor customer to a member (DESIGN 16): the customer's live subscriptions are read
 * (outside any transaction: it is a call to the processor) and then granted inside the batch's
 * transaction through the one grant path. The store implements it; the import only declares it.
 */
export interface CustomerLinker<R = unknown> {
  /** The customer's live subscriptions; throws when the processor cannot be read. */
  read(customerId: string): Promise<R>;
  /** Grants what was read to the user, inside `trx`; returns a note per subscription (what was done). */
  grant(trx: Kysely<DB>, userId: number, reading: R): Promise<string[]>;
}

export interface ImportDeps {
  /** The database (not a transaction): each batch opens its own. */
  db: Kysely<DB>;
  clock: Clock;
  membership: TierMembershipService;
  /** null: customer ids are linked, but no subscription is read (the store is off or not configured). */
  linker: CustomerLinker | null;
  /** Why there is no linker, noted on each linked row. */
  linkerMissing?: string;
  actor: ImportActor | null;
}

/** One row in a report. */
export interface RowReport {
  line: number;
  email: string;
  outcome: Outcome;
  reason?: RowError['reason'];
  message?: string;
  changes?: Change[];
  tier?: string | null;
  notes?: string[];
}

export interface ImportCounts {
  create: number;
  update: number;
  unchanged: number;
  error: number;
}

export interface ImportSummary {
  dry_run: boolean;
  rows: number;
  counts: ImportCounts;
  /** Columns the file has that no member field takes. */
  unknown_columns: string[];
  /** Ghost's columns present in the file that are read past (id, note, deleted_at, labels). */
  not_carried: string[];
  /** Every skipped row with its reason (the first MAX_ERROR_ROWS). */
  errors: RowReport[];
  errors_truncated: boolean;
  /** The first `listRows` rows, whatever their outcome (a preview's table). */
  listed: RowReport[];
}

export interface ImportProgress {
  bytesRead: number;
  rows: number;
  counts: ImportCounts;
}

export interface ImportOptions {
  dryRun: boolean;
  /** Rows per batch (each batch one transaction). */
  batchSize?: number;
  /** How many rows the summary lists whatever their outcome (a preview shows them). */
  listRows?: number;
  onProgress?(p: ImportProgress): void | Promise<void>;
}

export const MAX_ERROR_ROWS = 1000;
/** Small enough that a batch's transaction holds the embedded database's one connection only briefly. */
const BATCH_SIZE = 100;

/** Gives the event loop a turn between batches, so requests are served while a long import runs. */
const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function report(p: PlannedRow, notes: string[] = []): RowReport {
  if (p.outcome === 'error') return { line: p.line, email: p.email, outcome: 'error', reason: p.error.reason, message: p.error.message };
  return { line: p.line, email: p.email, outcome: p.outcome, changes: p.changes, tier: p.tier?.displayName ?? null, ...(notes.length > 0 ? { notes } : {}) };
}

const errorRow = (p: { line: number; email: string }, error: RowError): PlannedRow => ({ line: p.line, email: p.email, outcome: 'error', error });

/**
 * Reads a member CSV as a stream and plans, or applies, each row (DESIGN 16). Rows are handled in
 * batches: a batch is planned against the database, the card processor is read for the customers it
 * links, and the batch is applied in one transaction (planned again inside it, so nothing changed in
 * between is overwritten). A row that cannot be imported (no email, a malformed one, an unknown tier, a
 * repeated address) is reported and skipped; a batch that fails is applied again row by row, so one bad
 * row never takes others with it and no row is half applied. Idempotent by email: a second run of the
 * same file finds every row unchanged. A file that is not a CSV throws CsvError, one without an `email`
 * column HeaderError, before anything is written.
 */
export async function importMembers(deps: ImportDeps, source: Readable | AsyncIterable<Buffer>, opts: ImportOptions): Promise<ImportSummary> {
  const tiers = await TierCatalogue.load(deps.db);
  const progress: CsvProgress = { bytesRead: 0 };
  const summary: ImportSummary = {
    dry_run: opts.dryRun,
    rows: 0,
    counts: { create: 0, update: 0, unchanged: 0, error: 0 },
    unknown_columns: [],
    not_carried: [],
    errors: [],
    errors_truncated: false,
    listed: [],
  };
  const seen = new Set<string>();
  const batchSize = opts.batchSize ?? BATCH_SIZE;
  const listRows = opts.listRows ?? 0;
  let header: HeaderMap | null = null;
  let batch: Array<{ line: number; fields: string[] }> = [];

  const tally = (r: RowReport) => {
    summary.rows++;
    summary.counts[r.outcome]++;
    if (r.outcome === 'error') {
      if (summary.errors.length < MAX_ERROR_ROWS) summary.errors.push(r);
      else summary.errors_truncated = true;
    }
    if (summary.listed.length < listRows) summary.listed.push(r);
  };

  const flush = async () => {
    if (batch.length === 0) return;
    const records = batch;
    batch = [];
    const parsed: PlannedRow[] = [];
    const rows: MemberRow[] = [];
    const slot: number[] = [];
    for (const rec of records) {
      const p = parseRow(rec.fields, rec.line, header!);
      if (!p.ok) {
        parsed.push(errorRow(p, p.error));
        continue;
      }
      const key = p.row.email.toLowerCase();
      if (seen.has(key)) {
        parsed.push(errorRow(p.row, { reason: 'duplicate_email', message: `${p.row.email} is already on an earlier line of the file` }));
        continue;
      }
      seen.add(key);
      slot.push(parsed.length);
      parsed.push(errorRow(p.row, { reason: 'failed', message: 'not planned' }));
      rows.push(p.row);
    }
    const planned = await planWith(deps.db, deps, tiers, rows);
    planned.forEach((p, i) => (parsed[slot[i]!] = p));
    const results = opts.dryRun ? parsed.map((p) => report(p)) : await applyBatch(deps, tiers, parsed);
    for (const r of results) tally(r);
    await opts.onProgress?.({ bytesRead: progress.bytesRead, rows: summary.rows, counts: { ...summary.counts } });
    await yieldTurn();
  };

  for await (const rec of csvRecords(source, progress)) {
    if (!header) {
      header = readHeader(rec.fields);
      summary.unknown_columns = header.unknown;
      summary.not_carried = NOT_CARRIED.filter((c) => header!.index[c] >= 0);
      continue;
    }
    batch.push(rec);
    if (batch.length >= batchSize) await flush();
  }
  if (!header) readHeader([]);
  await flush();
  await opts.onProgress?.({ bytesRead: progress.bytesRead, rows: summary.rows, counts: { ...summary.counts } });
  return summary;
}

async function planWith(db: Kysely<DB>, deps: Pick<ImportDeps, 'actor'>, tiers: TierCatalogue, rows: MemberRow[]): Promise<PlannedRow[]> {
  const existing = await existingMembers(db, rows.map((r) => r.email));
  return rows.map((r) => planRow(r, existing.get(r.email.toLowerCase()), tiers, deps.actor));
}

/** Whether applying the row reads the card processor: a customer linked now, with a linker to read it. */
const linksCustomer = (p: PlannedRow, deps: ImportDeps) => p.outcome !== 'error' && p.changes.includes('stripe_customer_id') && deps.linker !== null;

async function applyBatch(deps: ImportDeps, tiers: TierCatalogue, planned: PlannedRow[]): Promise<RowReport[]> {
  // The processor is read first, outside the transaction; a customer it cannot read skips the row.
  const readings = new Map<string, unknown>();
  for (const p of planned) {
    if (!linksCustomer(p, deps) || p.outcome === 'error') continue;
    const customer = p.row.stripeCustomerId!;
    if (readings.has(customer)) continue;
    try {
      readings.set(customer, await deps.linker!.read(customer));
    } catch (e) {
      readings.set(customer, new LinkReadError(e instanceof Error ? e.message : String(e)));
    }
  }
  const applicable = planned.map((p): PlannedRow => {
    if (p.outcome === 'error' || !linksCustomer(p, deps)) return p;
    const r = readings.get(p.row.stripeCustomerId!);
    return r instanceof LinkReadError ? errorRow(p, { reason: 'card_processor_unreachable', message: `The card processor could not be read: ${r.message.slice(0, 200)}` }) : p;
  });
  const rows = applicable.filter((p): p is Extract<PlannedRow, { row: MemberRow }> => p.outcome !== 'error').map((p) => p.row);
  try {
    return await inTransaction(deps.db, async (trx) => {
      const again = await planWith(trx, deps, tiers, rows);
      const byLine = new Map(again.map((p) => [p.line, p]));
      // The batch's new members in one statement; each row's tier and customer after.
      const created = await insertImportedUsers(trx, again.flatMap((p) => (p.outcome === 'create' ? [importedUser(p.row, deps.clock.now())] : [])), deps.clock.now());
      const out: RowReport[] = [];
      const tierQueue: TierAssignment[] = [];
      for (const p of applicable) out.push(p.outcome === 'error' ? report(p) : await applyRow(trx, deps, byLine.get(p.line)!, readings, created, tierQueue));
      // The batch's manual assignments together, through the membership service (as many assignManually).
      await deps.membership.within(trx).noting({ how: 'import' }).assignManuallyMany(tierQueue, deps.actor?.usr_user_id ?? null);
      return out;
    });
  } catch {
    // Something in the batch failed (a row the database refused, an address taken meanwhile): each row
    // again in a transaction of its own, so the others are applied and the bad one is reported.
    const out: RowReport[] = [];
    for (const p of applicable) {
      if (p.outcome === 'error') {
        out.push(report(p));
        continue;
      }
      try {
        out.push(
          await inTransaction(deps.db, async (trx) => {
            const [again] = await planWith(trx, deps, tiers, [p.row]);
            return applyRow(trx, deps, again!, readings);
          }),
        );
      } catch (e) {
        out.push(report(errorRow(p, { reason: 'failed', message: (e instanceof Error ? e.message : String(e)).slice(0, 300) })));
      }
    }
    return out;
  }
}

class LinkReadError {
  constructor(readonly message: string) {}
}

/** The user a create row makes: passwords are never imported (the member signs in through a password reset). */
const importedUser = (row: MemberRow, now: Date): ImportedUser => ({
  email: row.email,
  firstName: row.firstName,
  lastName: row.firstName !== null ? row.lastName : null,
  // A sign-up time in the future is not one: the import's time is used.
  createTime: row.createdAt && row.createdAt.getTime() < now.getTime() ? row.createdAt : null,
  contactPreferences: row.subscribedToEmails ? 'email' : null,
  stripeCustomerId: row.stripeCustomerId,
});

/**
 * Applies one planned row inside the batch's transaction. A create row's user is in `created` when the
 * batch made it in bulk; otherwise (a row applied on its own) it is made here. A tier goes into
 * `tierQueue` for the batch's bulk assignment when one is given, else is assigned at once.
 */
type TierAssignment = { userId: number; tierId: number };

async function applyRow(
  trx: Kysely<DB>,
  deps: ImportDeps,
  p: PlannedRow,
  readings: Map<string, unknown>,
  created?: Map<string, number>,
  tierQueue?: TierAssignment[],
): Promise<RowReport> {
  if (p.outcome === 'error' || p.outcome === 'unchanged') return report(p);
  const { row } = p;
  const now = deps.clock.now();
  let userId: number;
  if (p.outcome === 'create') {
    userId = created?.get(row.email.toLowerCase()) ?? (await insertImportedUsers(trx, [importedUser(row, now)], now)).get(row.email.toLowerCase())!;
  } else {
    const existing = p.existing!;
    userId = existing.userId;
    const set: Record<string, unknown> = {};
    if (p.changes.includes('name')) Object.assign(set, { usr_first_name: row.firstName, usr_last_name: row.lastName });
    if (p.changes.includes('subscribed_to_emails')) {
      Object.assign(set, { usr_contact_preferences: withEmailChannel(existing.contactPreferences, row.subscribedToEmails!), usr_contact_preference_last_changed: now });
    }
    if (p.changes.includes('stripe_customer_id')) set.usr_stripe_customer_id = row.stripeCustomerId;
    if (Object.keys(set).length > 0) await trx.updateTable('usr_users').set({ ...set, usr_update_time: now }).where('usr_user_id', '=', userId).execute();
  }
  if (p.changes.includes('tier') && p.tier) {
    // A row whose customer is linked now takes its tier first, so that the subscription's grant follows it.
    const linksNow = p.changes.includes('stripe_customer_id') && deps.linker !== null;
    if (tierQueue && !linksNow) tierQueue.push({ userId, tierId: p.tier.tierId });
    else await deps.membership.within(trx).noting({ how: 'import' }).assignManually(userId, p.tier.tierId, deps.actor?.usr_user_id ?? null);
  }
  const notes: string[] = [];
  if (p.changes.includes('stripe_customer_id')) {
    if (deps.linker && readings.has(row.stripeCustomerId!)) notes.push(...(await deps.linker.grant(trx, userId, readings.get(row.stripeCustomerId!))));
    else if (deps.linkerMissing) notes.push(deps.linkerMissing);
  }
  return report(p, notes);
}

/**
 * Reads the whole file once as a member CSV, without the database: its data rows, or CsvError /
 * HeaderError for a file that is not one (so a run is refused before it starts).
 */
export async function checkMemberCsv(source: Readable | AsyncIterable<Buffer>): Promise<{ rows: number }> {
  let header = false;
  let rows = 0;
  for await (const rec of csvRecords(source)) {
    if (!header) {
      readHeader(rec.fields);
      header = true;
    } else rows++;
  }
  if (!header) readHeader([]);
  return { rows };
}
