import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeDatabase, embeddedDatabaseDir, embeddedDatabaseExists, maskDatabaseUrl } from '../../src/db/location.js';

describe('which database, as told to the operator', () => {
  it('never shows a password of DATABASE_URL', () => {
    expect(maskDatabaseUrl('postgres://gh:s3cr%40t@db.internal:5432/gatehouse')).toBe('postgres://gh:****@db.internal:5432/gatehouse');
    expect(maskDatabaseUrl('postgres://db/gatehouse?user=gh&password=s3cret&sslmode=require')).toBe('postgres://db/gatehouse?user=gh&password=****&sslmode=require');
    expect(maskDatabaseUrl("host=db dbname=gatehouse password='it''s s3cret' user=gh")).toBe('host=db dbname=gatehouse password=**** user=gh');
    expect(maskDatabaseUrl("host=db password='it\\'s s3cret' user=gh")).toBe('host=db password=**** user=gh');
    expect(maskDatabaseUrl('host=db PASSWORD=s3cret')).toBe('host=db PASSWORD=****');
    expect(maskDatabaseUrl('postgres://gh@db/gatehouse')).toBe('postgres://gh@db/gatehouse');
  });

  it('names the embedded database by its data directory, or PostgreSQL by its masked URL', () => {
    expect(describeDatabase({ databaseUrl: undefined, dataDir: '/srv/gh/data' })).toBe('the embedded database in /srv/gh/data (DATA_DIR)');
    expect(describeDatabase({ databaseUrl: 'postgres://gh:pw@db/gatehouse', dataDir: '/srv/gh/data' })).toBe('PostgreSQL at DATABASE_URL=postgres://gh:****@db/gatehouse');
  });

  it('finds an embedded database only where PostgreSQL left its PG_VERSION', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-location-'));
    try {
      expect(embeddedDatabaseExists(dir)).toBe(false);
      expect(embeddedDatabaseExists(path.join(dir, 'missing'))).toBe(false);
      mkdirSync(embeddedDatabaseDir(dir));
      expect(embeddedDatabaseExists(dir)).toBe(false);
      writeFileSync(path.join(embeddedDatabaseDir(dir), 'PG_VERSION'), '17\n');
      expect(embeddedDatabaseExists(dir)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
