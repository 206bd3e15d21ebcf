import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/db/database.js';
import { migrateWithPlugins } from '../../src/boot/plugins.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplate: string;
    pgTemplate: string;
  }
}

/**
 * Migrates once per run: a PGlite dump each test file loads (0.3 s instead of 3 s for a fresh
 * database), or, with DATABASE_URL, a PostgreSQL template database each file clones.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const url = process.env.DATABASE_URL;
  if (url) {
    const template = `gh_tpl_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create database ${template}`);
    const u = new URL(url);
    u.pathname = `/${template}`;
    const database = await openDatabase({ databaseUrl: u.toString(), pgPoolMax: 2 });
    await migrateWithPlugins(database.db);
    await database.close();
    project.provide('pgTemplate', template);
    project.provide('pgliteTemplate', '');
    return async () => {
      await admin.query(`drop database if exists ${template} with (force)`);
      await admin.end();
    };
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-tpl-'));
  const database = await openDatabase({});
  await migrateWithPlugins(database.db);
  const dump = await database.pglite!.dumpDataDir('none');
  await database.close();
  const file = path.join(dir, 'template.tar');
  writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  project.provide('pgliteTemplate', file);
  project.provide('pgTemplate', '');
  return async () => rmSync(dir, { recursive: true, force: true });
}
