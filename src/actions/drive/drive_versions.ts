import { defineAction } from '../define.js';
import { fileOutput, readerOf, sealedForOf } from '../../drive/tree.js';
import { versionsOf } from '../../drive/versions.js';

/** A file and its kept earlier versions (newest first); anyone who may see the file may see them. */
export default defineAction({
  name: 'drive_versions',
  description: 'The kept earlier versions of a Drive file (file_id), newest first',
  requires_setting: 'drive_active',
  mutates: false,
  input: {
    file_id: { type: 'int', required: true, min: 1 },
  },
  drive_item: { need: 'read', of: 'file' },
  async run(ctx) {
    const { db, item } = ctx;
    const file = await fileOutput(db, item.id, item.inTrash, readerOf(ctx));
    return { data: { file, versions: await versionsOf(db, item.id, file.sealed === true) }, ...sealedForOf({ file }) };
  },
});
