import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/types.js';
import { html, type SafeHtml } from './html.js';
import type { WebSession } from '../accounts/web-sessions.js';

/** A one-time notice: set by a form's POST before its redirect, shown by the next page that takes it. */
export interface Flash {
  /** The notice element's id (pages and tests find it by id). */
  id: string;
  text: string;
}

const KEY = 'flash';

const isFlash = (v: unknown): v is Flash => typeof v === 'object' && v !== null && typeof (v as Flash).id === 'string' && typeof (v as Flash).text === 'string';

/**
 * Keeps a notice in the session for the page the POST redirects to (POST-redirect-GET: the URL carries
 * no flag, so a reload does not bring it back). Only the session data's flash key is written, so a
 * concurrent cart change is not overwritten.
 */
export async function setFlash(db: Kysely<DB>, session: WebSession | null, flash: Flash): Promise<void> {
  if (!session) return;
  await db
    .updateTable('wss_web_sessions')
    .set({ wss_data: sql`jsonb_set(wss_data, ${sql.lit(`{${KEY}}`)}, ${JSON.stringify(flash)}::jsonb)` })
    .where('wss_web_session_id', '=', session.id)
    .execute();
  session.data[KEY] = flash;
}

/** The session's notice, removed as it is read; null (and no write) when there is none. */
export async function takeFlash(db: Kysely<DB>, session: WebSession | null): Promise<Flash | null> {
  const flash = session?.data[KEY];
  if (!session || flash === undefined) return null;
  await db
    .updateTable('wss_web_sessions')
    .set({ wss_data: sql`wss_data - ${sql.lit(KEY)}` })
    .where('wss_web_session_id', '=', session.id)
    .execute();
  delete session.data[KEY];
  return isFlash(flash) ? flash : null;
}

export function flashNotice(flash: Flash | null): SafeHtml | '' {
  return flash ? html`<p class="notice" role="status" id="${flash.id}">${flash.text}</p>` : '';
}
