import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupSourceOf, createBackup } from '../../src/backups/create.js';
import { backupsDir } from '../../src/backups/paths.js';
import { openDatabase } from '../../src/db/database.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { onPostgres } from '../helpers/database.js';

describe('backup create: a consistent database dump in DATA_DIR/backups', () => {
  let t: TestApp;
  let dataDir: string;
  let email: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'gh-backup-'));
    t = await createTestApp({ config: { dataDir } });
    email = (await t.createUser({ permission: 10 })).email;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** On PostgreSQL the test database is a clone; pg_dump must connect to it, not to DATABASE_URL's own. */
  async function source() {
    const base = backupSourceOf(t.services);
    if (!onPostgres) return base;
    const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(t.services.db);
    const u = new URL(process.env.DATABASE_URL!);
    u.pathname = `/${rows[0]!.name}`;
    return { ...base, databaseUrl: u.toString() };
  }

  it('writes the dump under its final name, mode 0600, with a progress line at start and end', async () => {
    const progress: string[] = [];
    const result = await createBackup(await source(), dataDir, (line) => progress.push(line));
    const ext = onPostgres ? '.pgdump' : '.pglite.tar.gz';
    expect(result.path).toBe(path.join(backupsDir(dataDir), `gatehouse-20260301-120000${ext}`));
    expect(result.size_bytes).toBe(statSync(result.path).size);
    expect(result.size_bytes).toBeGreaterThan(1000);
    expect(statSync(result.path).mode & 0o777).toBe(0o600);
    expect(readdirSync(backupsDir(dataDir))).toEqual([path.basename(result.path)]);
    expect(progress).toHaveLength(2);
    expect(progress[0]).toBe(`backup: dumping the ${onPostgres ? 'PostgreSQL' : 'embedded'} database to ${result.path}`);
    expect(progress[1]).toMatch(new RegExp(`^backup: wrote ${result.size_bytes} bytes in \\d+\\.\\d s$`));
  });

  it('restores: the dump holds the data', async () => {
    const file = readdirSync(backupsDir(dataDir)).find((f) => f.startsWith('gatehouse-'))!;
    const full = path.join(backupsDir(dataDir), file);
    if (onPostgres) {
      const listing = execFileSync('pg_restore', ['--list', full], { encoding: 'utf8' });
      expect(listing).toContain('TABLE DATA public usr_users');
      const data = execFileSync('pg_restore', ['--data-only', '--table=usr_users', '--file=-', full], { encoding: 'utf8' });
      expect(data).toContain(email);
    } else {
      const restored = await openDatabase({ loadDataDir: new Blob([readFileSync(full)]) });
      try {
        const row = await restored.db.selectFrom('usr_users').select(['usr_email', 'usr_permission']).where('usr_email', '=', email).executeTakeFirst();
        expect(row).toEqual({ usr_email: email, usr_permission: 10 });
      } finally {
        await restored.close();
      }
    }
  });

  it('never overwrites: a second dump in the same second gets its own name', async () => {
    const second = await createBackup(await source(), dataDir);
    expect(path.basename(second.path)).toBe(`gatehouse-20260301-120000-1${onPostgres ? '.pgdump' : '.pglite.tar.gz'}`);
  });

  it('is served by backups/list and byte-for-byte by backups/fetch', async () => {
    const { headers } = await t.keyHeaders({ userPermission: 10 });
    const list = await t.request({ method: 'GET', url: '/api/v1/management/backups/list', headers });
    expect(list.json.data.count).toBe(2);
    const first = list.json.data.files.find((f: { path: string }) => !f.path.includes('-1.'));
    const res = await t.request({ method: 'GET', url: `/api/v1/management/backups/fetch?path=${encodeURIComponent(first.path)}`, headers });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(Buffer.compare(res.rawPayload, readFileSync(path.join(backupsDir(dataDir), first.path)))).toBe(0);
    expect(first.size_bytes).toBe(res.rawPayload.length);
  });

  it.runIf(onPostgres)('reports a failing pg_dump clearly and leaves no partial file', async () => {
    const bad = { ...(await source()), databaseUrl: 'postgres://postgres@127.0.0.1:5432/gh_no_such_database' };
    await expect(createBackup(bad, dataDir)).rejects.toThrow(/^pg_dump failed \(exit 1\): .*gh_no_such_database/s);
    expect(readdirSync(backupsDir(dataDir)).filter((f) => f.endsWith('.partial'))).toEqual([]);
  });
});
