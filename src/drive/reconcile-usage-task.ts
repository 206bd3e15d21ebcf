import { sql } from 'kysely';
import { sweepBlobs, unreferencedBlobIds } from './files.js';
import type { DriveStorage } from './storage.js';
import type { TaskDefinition } from '../tasks/scheduler.js';

/** An unreferenced blob younger than this may be about to be referenced by an upload in flight. */
const SWEEP_GRACE_MS = 3600 * 1000;
const SWEEP_BATCH = 500;

/**
 * Daily: brings every blob's reference count back to the rows that really reference it (current content
 * of live files, kept versions), so usage and storage agree after any crash or manual repair, then
 * removes the bytes of blobs nothing references. Deleted file rows give their references back first. Quota usage itself is always summed from those rows.
 */
export function reconcileDriveUsageTask(storage: Pick<DriveStorage, 'blobs'>): TaskDefinition {
  return {
    name: 'reconcile_drive_usage',
    description: 'Recount Drive blob references from files and versions, and delete blobs nothing references',
    intervalSeconds: 86_400,
    async run({ db, clock }) {
      const { blobs } = storage;
      let releasedRows = 0;
      const corrected = await db.transaction().execute(async (trx) => {
        // Every new reference is taken by updating its blob row (acquireBlob), so this lock waits for
        // transactions taking references to finish and holds off new ones while the count is read.
        await sql`lock table fbb_file_blobs in share row exclusive mode`.execute(trx);
        // A deleted row holds no bytes (issue 35: every stored byte goes when its row goes): rows deleted
        // by a path that does not give their references back (a CRUD delete of a purpose's file) let go
        // here, with their kept versions, and the recount below frees the blobs.
        await sql`delete from fvr_file_versions
          where fvr_fil_file_id in (select fil_file_id from fil_files where fil_delete_time is not null)`.execute(trx);
        const released = await sql`update fil_files set fil_fbb_file_blob_id = null
          where fil_delete_time is not null and fil_fbb_file_blob_id is not null`.execute(trx);
        releasedRows = Number(released.numAffectedRows ?? 0);
        const { rows } = await sql<{ id: number }>`
          with refs as (
            select fil_fbb_file_blob_id as id from fil_files where fil_fbb_file_blob_id is not null
            union all
            select fvr_fbb_file_blob_id from fvr_file_versions
          ), counted as (select id, count(*)::int4 as n from refs group by id)
          update fbb_file_blobs b set fbb_refcount = coalesce(c.n, 0), fbb_update_time = ${clock.now()}
          from fbb_file_blobs b2 left join counted c on c.id = b2.fbb_file_blob_id
          where b.fbb_file_blob_id = b2.fbb_file_blob_id and b.fbb_refcount <> coalesce(c.n, 0)
          returning b.fbb_file_blob_id as id`.execute(trx);
        return rows.length;
      });
      let swept = 0;
      const before = new Date(clock.nowMs() - SWEEP_GRACE_MS);
      for (;;) {
        const ids = await unreferencedBlobIds(db, before, SWEEP_BATCH);
        const removed = await sweepBlobs(db, blobs, ids);
        swept += removed;
        if (ids.length < SWEEP_BATCH || removed === 0) break;
      }
      return { corrected_refcounts: corrected, released_deleted_files: releasedRows, deleted_blobs: swept };
    },
  };
}
