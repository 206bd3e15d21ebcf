import type { Kysely } from 'kysely';
import type { DB } from '../../db/types.js';
import type { Clock } from '../../lib/clock.js';
import { DEFAULT_TEMPLATES, MEMBER_EMAIL_KEYS, type MemberEmailKey, type MemberEmailTemplate } from './templates.js';

/** A template as it is now: the code's default, with a superadmin's edits (met_member_email_templates) over it. */
export async function loadTemplate(db: Kysely<DB>, key: MemberEmailKey): Promise<MemberEmailTemplate & { edited: boolean }> {
  const row = await db.selectFrom('met_member_email_templates').selectAll().where('met_key', '=', key).executeTakeFirst();
  const base = DEFAULT_TEMPLATES[key];
  return row ? { ...base, subject: row.met_subject, body: row.met_body, active: row.met_active, edited: true } : { ...base, edited: false };
}

export async function loadTemplates(db: Kysely<DB>): Promise<Array<MemberEmailTemplate & { edited: boolean }>> {
  const rows = new Map((await db.selectFrom('met_member_email_templates').selectAll().execute()).map((r) => [r.met_key, r]));
  return MEMBER_EMAIL_KEYS.map((key) => {
    const row = rows.get(key);
    const base = DEFAULT_TEMPLATES[key];
    return row ? { ...base, subject: row.met_subject, body: row.met_body, active: row.met_active, edited: true } : { ...base, edited: false };
  });
}

/** Stores a template's subject, body and switch (the caller checked the placeholders). */
export async function saveTemplate(db: Kysely<DB>, clock: Clock, key: MemberEmailKey, t: { subject: string; body: string; active: boolean }): Promise<void> {
  const now = clock.now();
  const values = { met_subject: t.subject, met_body: t.body, met_active: t.active, met_update_time: now };
  await db
    .insertInto('met_member_email_templates')
    .values({ met_key: key, ...values })
    .onConflict((oc) => oc.column('met_key').doUpdateSet(values))
    .execute();
}

/** Switches a template on or off, keeping its text (the default's when never edited). */
export async function setTemplateActive(db: Kysely<DB>, clock: Clock, key: MemberEmailKey, active: boolean): Promise<void> {
  const current = await loadTemplate(db, key);
  await saveTemplate(db, clock, key, { subject: current.subject, body: current.body, active });
}

/** Back to the code's default text and switch. */
export async function resetTemplate(db: Kysely<DB>, key: MemberEmailKey): Promise<void> {
  await db.deleteFrom('met_member_email_templates').where('met_key', '=', key).execute();
}
