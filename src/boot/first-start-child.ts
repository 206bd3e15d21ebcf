// Child process of a first start (first-start.ts): creates the embedded database in argv[2] (initdb and
// every migration), closes it and exits, so that the server's own process never holds the memory that
// creating it took.
import { openDatabase } from '../db/database.js';
import { migrateWithPlugins } from './plugins.js';

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: first-start-child <database directory>\n');
  process.exit(2);
}
try {
  const database = await openDatabase({ dataDir: dir });
  try {
    await migrateWithPlugins(database.db);
  } finally {
    await database.close();
  }
} catch (e) {
  process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}
