import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3PartStaging } from '../../src/drive/uploads/staging.js';
import { content } from './drive-upload-fixture.js';

// Regression (issue 31): part files lived only on the disk of the node that took the chunk, so behind a
// load balancer the next chunk on another node was refused (wrong_offset, received_bytes 0). Chunks are
// now staged in the shared S3 store, and a node lacking some fetches them.
describe('staged upload chunks (s3)', () => {
  let dir: string;
  let s3: S3rver;
  let staging: S3PartStaging;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'gh-staging-'));
    s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: path.join(dir, 's3rver'), configureBuckets: [{ name: 'gatehouse', configs: [] }] });
    const { port } = await s3.run();
    staging = new S3PartStaging({ endpoint: `http://127.0.0.1:${port}`, bucket: 'gatehouse', region: 'us-east-1', accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', forcePathStyle: true });
  });
  afterAll(async () => {
    await s3?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('another node rebuilds the part file from the staged chunks, byte for byte, and stops at a missing one', async () => {
    const part = 'a'.repeat(32) + '.part';
    const bytes = content(3000, 'staged');
    const nodeA = path.join(dir, 'a', part);
    await mkdir(path.dirname(nodeA), { recursive: true });
    await writeFile(nodeA, bytes);
    for (const start of [0, 1000, 2000]) await staging.stage(part, nodeA, { plainStart: start, storedStart: start, storedLength: 1000 });
    // Node B holds the first chunk itself and lacks the rest.
    const nodeB = path.join(dir, 'b', 'uploads', part);
    expect(await staging.restore(part, nodeB, { plain: 0, stored: 0 }, 1000)).toEqual({ plain: 1000, stored: 1000 });
    expect(await readFile(nodeB)).toEqual(bytes.subarray(0, 1000));
    expect(await staging.restore(part, nodeB, { plain: 1000, stored: 1000 }, 3000)).toEqual({ plain: 3000, stored: 3000 });
    expect(await readFile(nodeB)).toEqual(bytes);
    // A later chunk not staged: the file ends where the staged chunks end.
    const nodeC = path.join(dir, 'c', part);
    expect(await staging.restore(part, nodeC, { plain: 0, stored: 0 }, 4000)).toEqual({ plain: 3000, stored: 3000 });
    await staging.remove(part);
    const nodeD = path.join(dir, 'd', part);
    expect(await staging.restore(part, nodeD, { plain: 0, stored: 0 }, 3000)).toEqual({ plain: 0, stored: 0 });
  });
});
