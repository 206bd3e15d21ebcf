import { readFileSync } from 'node:fs';
import path from 'node:path';
import { INITIAL_ADMIN_FILE } from '../accounts/initial-admin.js';
import { HTTPS_COMMAND } from '../http/transport.js';

/** What the operator is told once the server listens (stderr, never inside a JSON log line). */
export interface StartNotes {
  loginUrl: string;
  database: string;
  /**
   * The superadmin made on the first start, while DATA_DIR/initial-admin.json (its password) is still
   * there; `created` on the start that made it.
   */
  initialAdmin: { email: string; file: string; created: boolean } | null;
  /** Whether the API refuses plain HTTP (the setting as it stands after a dev start). */
  httpsRequired: boolean;
  /** Dev mode switched api_require_https off on this start. */
  httpsSwitchedOff: boolean;
}

/**
 * The initial admin as the banner names it: the one just created, else the email in an initial-admin.json
 * left from an earlier first start (the operator deletes it once the password is changed). Never the secrets.
 */
export function initialAdminNote(dataDir: string, created: { email: string; file: string } | null): StartNotes['initialAdmin'] {
  if (created) return { ...created, created: true };
  const file = path.join(dataDir, INITIAL_ADMIN_FILE);
  try {
    const { email } = JSON.parse(readFileSync(file, 'utf8')) as { email?: unknown };
    return typeof email === 'string' ? { email, file, created: false } : null;
  } catch {
    return null;
  }
}

/** The one command that lets the API answer plain HTTP (local development without TLS); the staff pages' banner shows it too. */

/** `npm start`: the banner as one readable line among the JSON log lines. */
export function startLine(notes: StartNotes): string {
  const parts = [`gatehouse: ready, sign in at ${notes.loginUrl}`];
  if (notes.initialAdmin) parts.push(`admin ${notes.initialAdmin.email}, password in ${notes.initialAdmin.file}`);
  parts.push(`database: ${notes.database}`);
  if (notes.httpsRequired) parts.push(`the API refuses plain HTTP (for local development: ${HTTPS_COMMAND}, or npm run dev)`);
  return parts.join('; ');
}

/** `npm run dev`: the same notes as a block a developer spots among the log lines. */
export function devBanner(notes: StartNotes): string[] {
  const rows: Array<[string, string]> = [['Sign in', notes.loginUrl]];
  if (notes.initialAdmin) {
    rows.push(['Email', notes.initialAdmin.email]);
    rows.push(['Password', `in ${notes.initialAdmin.file}${notes.initialAdmin.created ? ' (written on this first start)' : ''}`]);
  }
  rows.push(['Database', notes.database]);
  rows.push([
    'HTTPS',
    notes.httpsRequired
      ? `required: the API refuses plain HTTP (${HTTPS_COMMAND} changes it)`
      : notes.httpsSwitchedOff
        ? 'not required: api_require_https switched off in this data directory'
        : 'not required (api_require_https is off)',
  ]);
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  const title = `  Gatehouse is running in development mode${notes.initialAdmin?.created ? ' (first start)' : ''}`;
  return ['', title, ...rows.map(([label, value]) => `  ${`${label}:`.padEnd(width)}${value}`), ''];
}
