import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupSourceOf, createBackup } from '../../src/backups/create.js';
import type { BackupProgress } from '../../src/backups/progress.js';
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
  async function cloneUrl(): Promise<string> {
    const { rows } = await sql<{ name: string }>`select current_database() as name`.execute(t.services.db);
    const u = new URL(process.env.DATABASE_URL!);
    u.pathname = `/${rows[0]!.name}`;
    return u.toString();
  }

  async function source() {
    const base = backupSourceOf(t.services);
    return onPostgres ? { ...base, databaseUrl: await cloneUrl() } : base;
  }

  it('writes the dump under its final name, mode 0600, with progress from start to end', async () => {
    const progress: BackupProgress[] = [];
    const result = await createBackup(await source(), dataDir, (p) => progress.push(p));
    const ext = onPostgres ? '.pgdump' : '.pglite.tar.gz';
    expect(result.path).toBe(path.join(backupsDir(dataDir), `gatehouse-20260301-120000${ext}`));
    expect(result.size_bytes).toBe(statSync(result.path).size);
    expect(result.size_bytes).toBeGreaterThan(1000);
    expect(statSync(result.path).mode & 0o777).toBe(0o600);
    // The dump, and beside it Drive's blobs and the manifest that names them (issue 35).
    const base = path.basename(result.path);
    expect(readdirSync(backupsDir(dataDir)).sort()).toEqual([base, `${base}.blobs.tar`, `${base}.manifest.json`].sort());
    expect(progress[0]).toEqual({ kind: 'note', text: `dumping the ${onPostgres ? 'PostgreSQL' : 'embedded'} database into ${backupsDir(dataDir)}` });
    const last = progress.at(-1)!;
    expect(last.kind === 'note' && last.text).toMatch(new RegExp(`^wrote ${result.size_bytes} bytes in \\d+\\.\\d s: ${result.path}$`));
    const fractions = progress.flatMap((p) => (p.kind === 'step' ? [p.fraction] : []));
    expect(fractions.at(-1)).toBe(1);
    expect(fractions).toEqual([...fractions].sort((a, b) => a - b));
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
    // Two backups, each with its blob archive and manifest.
    expect(list.json.data.count).toBe(6);
    const first = list.json.data.files.find((f: { path: string }) => !f.path.includes('-1.') && /\.(pgdump|pglite\.tar\.gz)$/.test(f.path));
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

  describe('scheduled backups (backup_site): backup_schedule_hours, backup_keep, and the stats backups block', () => {
    const ext = onPostgres ? '.pgdump' : '.pglite.tar.gz';
    const site = async () => {
      const { headers } = await t.keyHeaders({ userPermission: 10 });
      const res = await t.request({ method: 'GET', url: '/api/v1/management/stats', headers });
      expect(res.statusCode).toBe(200);
      return res.json.data.backups.site;
    };

    beforeAll(async () => {
      // The task dumps the database its process runs on: on PostgreSQL, this file's clone.
      if (onPostgres) t.services.config.databaseUrl = await cloneUrl();
    });

    it('is off while backup_schedule_hours is 0: not due, and reported as not scheduled', async () => {
      expect(await t.services.scheduler.runNow('backup_site')).toEqual([{ task: 'backup_site', skipped: 'not_due', next_due_time: null }]);
      expect(await site()).toEqual({
        configured: true,
        scheduled: false,
        interval_seconds: null,
        last_run_time: null,
        last_outcome: null,
        last_error: null,
        reached_bucket: null,
        recovery_key_fingerprint: null,
        schedule_hours: 0,
        keep: 7,
        last_backup_path: null,
        last_backup_time: null,
        last_backup_size_bytes: null,
        kept_count: 0,
        next_due_time: null,
      });
    });

    it('takes one backup per period into backups/scheduled and keeps the newest backup_keep', async () => {
      await t.services.settings.set('backup_schedule_hours', 6);
      await t.services.settings.set('backup_keep', 2);
      expect((await site()).next_due_time).toBe('2026-03-01 12:00:00');
      const names: string[] = [];
      for (let run = 0; run < 3; run++) {
        if (run > 0) {
          // Not due again within the period.
          t.clock.advanceSeconds(6 * 3600 - 1);
          const [early] = await t.services.scheduler.runNow('backup_site');
          expect(early).toMatchObject({ skipped: 'not_due' });
          t.clock.advanceSeconds(1);
        }
        const [outcome] = await t.services.scheduler.runNow('backup_site');
        const name = `scheduled/gatehouse-${t.clock.now().toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-')}${ext}`;
        names.push(name);
        expect(outcome).toEqual({
          task: 'backup_site',
          result: {
            file: name,
            size_bytes: statSync(path.join(backupsDir(dataDir), name)).size,
            kept: Math.min(run + 1, 2),
            pruned: run === 2 ? [names[0]] : [],
            reached_bucket: false,
            recovery_key_fingerprint: null,
          },
        });
      }
      // The pruned backup went with its side files.
      expect(readdirSync(path.join(backupsDir(dataDir), 'scheduled')).sort()).toEqual(
        [names[1]!, names[2]!].flatMap((n) => [path.basename(n), `${path.basename(n)}.blobs.tar`, `${path.basename(n)}.manifest.json`]).sort(),
      );
      // The operator's own backups in the folder above are never pruned.
      expect(readdirSync(backupsDir(dataDir)).filter((f) => /^gatehouse-.*\.(pgdump|pglite\.tar\.gz)$/.test(f))).toHaveLength(2);
      expect(await site()).toEqual({
        configured: true,
        scheduled: true,
        interval_seconds: 6 * 3600,
        last_run_time: '2026-03-02 00:00:00',
        last_outcome: 'success',
        last_error: null,
        reached_bucket: false,
        recovery_key_fingerprint: null,
        schedule_hours: 6,
        keep: 2,
        last_backup_path: names[2],
        last_backup_time: '2026-03-02 00:00:00',
        last_backup_size_bytes: statSync(path.join(backupsDir(dataDir), names[2]!)).size,
        kept_count: 2,
        next_due_time: '2026-03-02 06:00:00',
      });
    });

    it('reports a failed run, and retries it within the hour rather than a period later', async () => {
      t.clock.advanceSeconds(6 * 3600);
      // A folder where the scheduled folder should be: the backup cannot be written.
      const scheduled = path.join(backupsDir(dataDir), 'scheduled');
      rmSync(scheduled, { recursive: true });
      writeFileSync(scheduled, 'not a folder');
      try {
        const [outcome] = await t.services.scheduler.runNow('backup_site');
        expect(outcome).toMatchObject({ task: 'backup_site', error: expect.stringMatching(/EEXIST|ENOTDIR/) });
        expect(await site()).toMatchObject({ last_outcome: 'error', reached_bucket: false, last_run_time: '2026-03-02 06:00:00', next_due_time: '2026-03-02 07:00:00', kept_count: 0 });
      } finally {
        rmSync(scheduled);
      }
    });
  });
});
