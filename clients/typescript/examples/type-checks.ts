// Compile-time checks that the generated types bind: each @ts-expect-error line must be a type error.
import type { GatehouseClient } from '../src/index.js';

export async function typeChecks(client: GatehouseClient): Promise<void> {
  // @ts-expect-error event_withdraw requires evr_event_registrant_id
  await client.action('event_withdraw', { confirm: true });
  // @ts-expect-error no such action
  await client.action('no_such_action', {});
  // @ts-expect-error confirm is a boolean
  await client.action('event_withdraw', { evr_event_registrant_id: 1, confirm: 'yes' });
  // @ts-expect-error no such path
  await client.get('/NoSuchClasss');
  const user = await client.get('/User/{id}', { params: { id: 1 } });
  // @ts-expect-error the password is never exported
  void user.usr_password;
  const email: string | null = user.usr_email;
  void email;
}
