import { readFileSync } from 'node:fs';
import pg from 'pg';
import { inject } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { randomHex } from '../../src/lib/crypto.js';

export const onPostgres = Boolean(process.env.DATABASE_URL);

/** A fresh, migrated database for one test file: a loaded PGlite dump, or a clone of the pg template. */
export async function openTestDatabase(): Promise<Database> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    const dump = readFileSync(inject('pgliteTemplate'));
    return openDatabase({ loadDataDir: new Blob([dump]) });
  }
  const name = `gh_t_${randomHex(6)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  for (let attempt = 0; ; attempt++) {
    try {
      await admin.query(`create database ${name} template ${inject('pgTemplate')}`);
      break;
    } catch (e) {
      // Two clones of one template at the same instant collide; wait and try again.
      if (attempt > 20 || !/being accessed by other users/.test(String(e))) throw e;
      await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
    }
  }
  const u = new URL(url);
  u.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: u.toString(), pgPoolMax: 10 });
  const close = database.close;
  database.close = async () => {
    await close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  };
  return database;
}
