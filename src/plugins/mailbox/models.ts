import type { Kysely } from 'kysely';
import { transactionError } from '../../http/errors.js';
import { standardTimes } from '../../models/common.js';
import { col, defineModel, type Row } from '../../models/define.js';
import { checkLevelAllowed } from './mailboxes.js';
import { SECURITY_LEVELS } from './tables.js';

// Model Mailbox (DESIGN 11): readable by its owner and staff over CRUD; staff create further mailboxes and
// change security levels. A raise is re-sealed in the background by the mailbox_reseal task.

async function checkLevel(db: Kysely<any>, ownerUserId: unknown, level: unknown): Promise<void> {
  if (typeof level !== 'string' || typeof ownerUserId !== 'number') return;
  const problem = await checkLevelAllowed(db, ownerUserId, level);
  if (problem) throw transactionError(`Invalid value for mbx_security_level: ${problem}`);
}

function checkAddress(values: Row): void {
  if (!('mbx_address' in values)) return;
  const a = values.mbx_address;
  if (typeof a !== 'string' || !/^[^\s@<>,;]+@[^\s@<>,;]+$/.test(a)) throw transactionError('Invalid value for mbx_address: must be an email address');
}

export const Mailbox = defineModel({
  className: 'Mailbox',
  table: 'mbx_mailboxes',
  prefix: 'mbx',
  primaryKey: 'mbx_mailbox_id',
  owner: 'mbx_usr_user_id',
  plugin: 'mailbox',
  columns: {
    mbx_mailbox_id: col.serial(),
    mbx_usr_user_id: col.bigint({ required: true }),
    mbx_address: col.varchar(255, { required: true }),
    mbx_security_level: col.varchar(16, { options: SECURITY_LEVELS }),
    mbx_is_default: col.bool(),
    ...standardTimes('mbx'),
  },
  exposure: { readable: true, writable: true, writableBy: 'staff' },
  createNew: async (input, ctx) => {
    checkAddress(input);
    await checkLevel(ctx.trx, input.mbx_usr_user_id, input.mbx_security_level ?? 'standard');
    const row = await (ctx.trx as unknown as Kysely<Record<string, Row>>)
      .insertInto('mbx_mailboxes')
      .values({ ...input, mbx_is_default: false })
      .returning('mbx_mailbox_id')
      .executeTakeFirstOrThrow();
    return Number(row.mbx_mailbox_id);
  },
  beforeUpdate: async (stored, changes, ctx) => {
    checkAddress(changes);
    if ('mbx_usr_user_id' in changes && changes.mbx_usr_user_id !== stored.mbx_usr_user_id) throw transactionError('A mailbox cannot change owner');
    await checkLevel(ctx.trx, stored.mbx_usr_user_id, changes.mbx_security_level);
  },
});
