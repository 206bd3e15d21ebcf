import type { Action } from '../define.js';
import memberImportPreview from './member_import_preview.js';
import memberImportRun from './member_import_run.js';
import memberImportStatus from './member_import_status.js';

/** Member import (DESIGN 16): preview, run, and follow a run. */
export const memberImportActions: Action[] = [memberImportPreview, memberImportRun, memberImportStatus];
