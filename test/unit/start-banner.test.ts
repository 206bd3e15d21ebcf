import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { devBanner, initialAdminNote, startLine, type StartNotes } from '../../src/boot/start-banner.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-banner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const notes = (over: Partial<StartNotes> = {}): StartNotes => ({
  loginUrl: 'https://members.example.com/login',
  database: 'PostgreSQL at DATABASE_URL=postgres://gh:****@db/gh',
  initialAdmin: null,
  httpsRequired: false,
  httpsSwitchedOff: false,
  ...over,
});

describe('the start banner', () => {
  it('names the initial admin from the file left by the first start, never its secrets, and nothing once it is gone', () => {
    const file = path.join(dir, 'initial-admin.json');
    expect(initialAdminNote(dir, null)).toBeNull();
    writeFileSync(file, JSON.stringify({ user_id: 1, email: 'admin@gatehouse.local', password: 'p4ss', public_key: 'key_x', secret_key: 's3cret' }));
    expect(initialAdminNote(dir, null)).toEqual({ email: 'admin@gatehouse.local', file, created: false });
    expect(initialAdminNote(dir, { email: 'a@b.c', file })).toEqual({ email: 'a@b.c', file, created: true });
    writeFileSync(file, 'not json');
    expect(initialAdminNote(dir, null)).toBeNull();
  });

  it('npm start: one line, the HTTPS hint only while plain HTTP is refused', () => {
    expect(startLine(notes())).toBe('gatehouse: ready, sign in at https://members.example.com/login; database: PostgreSQL at DATABASE_URL=postgres://gh:****@db/gh');
    const line = startLine(notes({ httpsRequired: true, initialAdmin: { email: 'admin@gatehouse.local', file: '/d/initial-admin.json', created: false } }));
    expect(line).not.toContain('\n');
    expect(line).toContain('; admin admin@gatehouse.local, password in /d/initial-admin.json; ');
    expect(line).toMatch(/the API refuses plain HTTP \(for local development: npx gatehouse setting set api_require_https false, or npm run dev\)$/);
  });

  it('npm run dev: an aligned block, saying how HTTPS stands', () => {
    expect(devBanner(notes({ httpsRequired: true, initialAdmin: { email: 'admin@gatehouse.local', file: '/d/initial-admin.json', created: true } }))).toEqual([
      '',
      '  Gatehouse is running in development mode (first start)',
      '  Sign in:  https://members.example.com/login',
      '  Email:    admin@gatehouse.local',
      '  Password: in /d/initial-admin.json (written on this first start)',
      '  Database: PostgreSQL at DATABASE_URL=postgres://gh:****@db/gh',
      '  HTTPS:    required: the API refuses plain HTTP (npx gatehouse setting set api_require_https false changes it)',
      '',
    ]);
    expect(devBanner(notes()).at(-2)).toBe('  HTTPS:    not required (api_require_https is off)');
  });
});
