import { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isProcessAlive } from '../../db/data-dir-lock.js';
import { randomHex } from '../../lib/crypto.js';
import type { LeaseHolder } from './pending.js';

// Who holds a chunk lease. The node is its upload directory (DATA_DIR/uploads, where its part files
// are): an id kept there survives a restart. Each boot (process) of the node writes its pid under
// `boots/<boot>`, so when a lease names this node under another boot, the node can tell whether that
// process is gone (no file, or a pid no longer running: a kill -9, a crash, an out-of-memory kill) and
// take its lease over at once. A boot whose process still runs (two processes on one DATA_DIR) is left
// to its lease, which lapses like any other node's.

const NODE_ID_FILE = 'node-id';
const BOOTS_DIR = 'boots';
const ID_RE = /^[0-9a-f]{16}$/;

function writeAtomically(file: string, text: string): void {
  const temp = `${file}.${randomHex(4)}.tmp`;
  writeFileSync(temp, text, { flag: 'wx' });
  renameSync(temp, file);
}

/** This node's id, made once (written atomically) and read on every later start. */
export function nodeIdOf(uploadsDir: string): string {
  const file = path.join(uploadsDir, NODE_ID_FILE);
  try {
    const id = readFileSync(file, 'utf8').trim();
    if (ID_RE.test(id)) return id;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  mkdirSync(uploadsDir, { recursive: true });
  const id = randomHex(8);
  writeAtomically(file, `${id}\n`);
  return id;
}

/** Whether the process of an earlier boot of this node is gone. */
function bootIsDead(bootsDir: string, boot: string): boolean {
  if (!ID_RE.test(boot)) return true;
  let pid: number;
  try {
    pid = Number(readFileSync(path.join(bootsDir, boot), 'utf8').trim());
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw e;
  }
  return !Number.isSafeInteger(pid) || pid <= 0 || (pid !== process.pid && !isProcessAlive(pid));
}

/**
 * A new boot of this node: one per opened storage (one per process). Records this process's pid for the
 * boot and forgets boots whose processes are gone.
 */
export function newLeaseHolder(uploadsDir: string): LeaseHolder {
  const node = nodeIdOf(uploadsDir);
  const boot = randomHex(8);
  const bootsDir = path.join(uploadsDir, BOOTS_DIR);
  mkdirSync(bootsDir, { recursive: true });
  for (const name of readdirSync(bootsDir)) {
    if (ID_RE.test(name) && bootIsDead(bootsDir, name)) {
      try {
        unlinkSync(path.join(bootsDir, name));
      } catch {
        // another process tidied it first
      }
    }
  }
  writeAtomically(path.join(bootsDir, boot), `${process.pid}\n`);
  return { node, boot, isDeadBoot: (other) => other !== boot && bootIsDead(bootsDir, other) };
}
