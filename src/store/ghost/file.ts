import { formatBytes } from '../../lib/byte-size.js';
import { open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { GHOST_EXPORT_MAX_BYTES, GhostExportError, parseGhostExport } from './format.js';

/** Reads and parses an export file, refusing one over the size limit before reading it. */
export async function readGhostExportFile(file: string): Promise<ReturnType<typeof parseGhostExport>> {
  let size: number;
  try {
    const s = await stat(file);
    if (!s.isFile()) throw new GhostExportError(`${file} is not a file`);
    size = s.size;
  } catch (e) {
    if (e instanceof GhostExportError) throw e;
    throw new GhostExportError(`Cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  if (size > GHOST_EXPORT_MAX_BYTES) throw new GhostExportError(`${file} is ${size} bytes, over the ${formatBytes(GHOST_EXPORT_MAX_BYTES)} limit of a Ghost content export`);
  const handle = await open(file, 'r');
  try {
    return parseGhostExport(await handle.readFile('utf8'));
  } finally {
    await handle.close();
  }
}

/** Writes text to file atomically: a temporary file beside it, synced, then renamed over it. */
export async function writeFileAtomically(file: string, text: string): Promise<void> {
  const partial = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.partial`);
  const handle = await open(partial, 'w', 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(partial, file);
  } catch (e) {
    await rm(partial, { force: true });
    throw e;
  }
}
