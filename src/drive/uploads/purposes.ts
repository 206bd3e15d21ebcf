import type { Settings } from '../../settings/store.js';
import { DRIVE_SOURCE } from '../files.js';

/**
 * What an upload is for, fixed at init (DESIGN 9). `drive` makes a Drive file or version under the
 * owner's quota; any other purpose skips quota, folders and the dedup short-circuit and makes a plain
 * file row whose fil_source is the purpose's name, bounded by the purpose's own size setting.
 */
export interface UploadPurpose {
  name: string;
  isDrive: boolean;
  /** The largest upload a non-Drive purpose accepts (Drive uses the owner's tier features instead). */
  maxBytes(settings: Settings): number;
}

const PURPOSES: readonly UploadPurpose[] = [
  { name: DRIVE_SOURCE, isDrive: true, maxBytes: () => Number.MAX_SAFE_INTEGER },
  { name: 'mail_import_archive', isDrive: false, maxBytes: (s) => s.int('upload_mail_import_archive_max_bytes') },
];

export const UPLOAD_PURPOSE_NAMES = PURPOSES.map((p) => p.name);

export function uploadPurpose(name: string): UploadPurpose | null {
  return PURPOSES.find((p) => p.name === name) ?? null;
}
