import { existsSync } from 'node:fs';
import path from 'node:path';

/** Where the embedded database lives inside DATA_DIR. */
export function embeddedDatabaseDir(dataDir: string): string {
  return path.join(dataDir, 'db');
}

/** Whether DATA_DIR holds an embedded database: PGlite keeps a PostgreSQL data directory, which has PG_VERSION. */
export function embeddedDatabaseExists(dataDir: string): boolean {
  return existsSync(path.join(embeddedDatabaseDir(dataDir), 'PG_VERSION'));
}

const MASK = '****';

/** A PostgreSQL connection string as it may be shown or logged: any password replaced by ****. */
export function maskDatabaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not a URL (a libpq keyword string such as `host=db password=...`): mask the keyword's value.
    // A quoted value may hold spaces, \' and (though libpq does not take it) a doubled '': all of it is masked.
    return url.replace(/(password\s*=\s*)('(?:''|[^'\\]|\\.)*'|\S+)/gi, `$1${MASK}`);
  }
  if (parsed.password) parsed.password = MASK;
  for (const key of [...parsed.searchParams.keys()]) {
    if (key.toLowerCase() === 'password') parsed.searchParams.set(key, MASK);
  }
  return parsed.toString();
}

/** The database a server or command uses, as told to the operator (never with a password). */
export function describeDatabase(config: { databaseUrl: string | undefined; dataDir: string }): string {
  return config.databaseUrl
    ? `PostgreSQL at DATABASE_URL=${maskDatabaseUrl(config.databaseUrl)}`
    : `the embedded database in ${config.dataDir} (DATA_DIR)`;
}
