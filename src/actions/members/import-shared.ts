import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import { HeaderError } from '../../accounts/member-import/columns.js';
import type { ImportActor } from '../../accounts/member-import/plan.js';
import type { ImportDeps } from '../../accounts/member-import/import.js';
import { MemberImportRunner } from '../../accounts/member-import/jobs.js';
import type { Config } from '../../config.js';
import type { DB } from '../../db/types.js';
import type { DriveStorage } from '../../drive/storage.js';
import { findPurposeFile, openPurposeFile, type PurposeFile } from '../../drive/uploads/purpose-files.js';
import { MEMBER_IMPORT_PURPOSE } from '../../drive/uploads/purposes.js';
import { businessError, validationError, type ApiError } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import { CsvError } from '../../lib/csv.js';
import type { Settings } from '../../settings/store.js';
import { cardCustomerLinker } from '../../store/customer-subscriptions.js';
import type { StoreSystem } from '../../store/index.js';
import { TierMembershipService } from '../../tiers/membership.js';

/** The caller's uploaded member CSV (an upload of purpose member_import), or 404. */
export async function requireImportFile(db: Kysely<DB>, fileId: number, userId: number): Promise<PurposeFile> {
  const file = await findPurposeFile(db, MEMBER_IMPORT_PURPOSE, fileId, userId);
  if (!file) throw businessError(`No member_import upload with file id ${fileId} of yours`, { reason: 'not_found' });
  return file;
}

/** A file that is no member CSV, in the contract's words: 422 ValidationError on `upload`. */
export function notCsvRefusal(e: unknown): ApiError | null {
  if (e instanceof CsvError || e instanceof HeaderError) return validationError({ upload: `is not a member CSV: ${e.message}` }, 'The file is not a member CSV');
  return null;
}

/** What running an import reaches for: the services satisfy it. */
export interface MemberImportServices {
  db: Kysely<DB>;
  clock: Clock;
  config: Config;
  settings: Settings;
  store: StoreSystem;
  driveStorage: DriveStorage;
}

/**
 * The import's dependencies for an actor: the card processor linker while the store is active and the
 * processor configured; otherwise customer ids are only linked.
 */
export function memberImportDeps(s: MemberImportServices, actor: ImportActor | null, db: Kysely<DB> = s.db): ImportDeps {
  const membership = new TierMembershipService(db, s.clock);
  const configured = s.store.active() && s.settings.string('card_processor_api_key') !== '';
  return {
    db,
    clock: s.clock,
    membership,
    actor,
    linker: configured ? cardCustomerLinker(s.store.context(db), membership) : null,
    ...(configured ? {} : { linkerMissing: 'subscriptions not read: the store is not active or the card processor is not configured' }),
  };
}

/** The background runner of import jobs, over these services' database and blob store. */
export function memberImportRunner(s: MemberImportServices): MemberImportRunner {
  return new MemberImportRunner(s.db, s.clock, {
    async importDeps(actorUserId) {
      const actor = await s.db.selectFrom('usr_users').select(['usr_user_id', 'usr_permission']).where('usr_user_id', '=', actorUserId).executeTakeFirst();
      return memberImportDeps(s, actor ? { usr_user_id: Number(actor.usr_user_id), usr_permission: actor.usr_permission } : { usr_user_id: actorUserId, usr_permission: 0 });
    },
    async openFile(fileId, ownerUserId): Promise<Readable | null> {
      const file = await findPurposeFile(s.db, MEMBER_IMPORT_PURPOSE, fileId, ownerUserId);
      return file ? openPurposeFile(s.driveStorage.blobs, file) : null;
    },
  });
}
