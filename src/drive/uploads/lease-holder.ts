import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomHex } from '../../lib/crypto.js';
import type { LeaseHolder } from './pending.js';

// Who holds a chunk lease. The node is its upload directory (DATA_DIR/uploads, where its part files
// are): an id kept there survives a restart, so a node started again knows that leases naming it under
// another boot belong to a process that is gone. One DATA_DIR is one node (the embedded database's lock
// file enforces it; a cluster gives each node a DATA_DIR of its own).

const NODE_ID_FILE = 'node-id';
const ID_RE = /^[0-9a-f]{16}$/;

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
  const temp = `${file}.${randomHex(4)}.tmp`;
  writeFileSync(temp, `${id}\n`, { flag: 'wx' });
  renameSync(temp, file);
  return id;
}

/** A new boot of this node: one per opened storage (one per process). */
export function newLeaseHolder(uploadsDir: string): LeaseHolder {
  return { node: nodeIdOf(uploadsDir), boot: randomHex(8) };
}
