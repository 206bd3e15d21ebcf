import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { embeddedDatabaseDir, embeddedDatabaseExists } from '../db/location.js';

/** The child's entry (compiled next to this module). */
const CHILD = fileURLToPath(new URL('./first-start-child.js', import.meta.url));

/**
 * A first start creates the embedded database (initdb and every migration) in a short-lived child process,
 * and the server then opens the result. Creating it takes WebAssembly memory (about 850 MB here) that a
 * WebAssembly instance never gives back, while reopening a created database takes about a third of that;
 * done in the server's own process, the creation's peak would stay its resident size for good.
 * Resolves at once when DATA_DIR holds a database already.
 */
export async function createEmbeddedDatabaseIfMissing(dataDir: string): Promise<boolean> {
  if (embeddedDatabaseExists(dataDir)) return false;
  if (!existsSync(CHILD)) throw new Error(`cannot create the embedded database: ${CHILD} is missing (run npm run build)`);
  const dir = embeddedDatabaseDir(dataDir);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`creating the embedded database in ${dir} failed (${signal ?? `exit ${code}`}): ${stderr.trim() || 'no message'}`));
    });
  });
  return true;
}
