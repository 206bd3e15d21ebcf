// Sign in, read the session, list products, and run an action, through the typed client.
//   GATEHOUSE_URL=http://127.0.0.1:8080 GATEHOUSE_EMAIL=... GATEHOUSE_PASSWORD=... npx tsx examples/basic.ts
import { GatehouseClient, GatehouseError } from '../src/index.js';

export async function example(baseUrl: string, email: string, password: string): Promise<string[]> {
  const client = new GatehouseClient({ baseUrl });
  const lines: string[] = [];
  const login = await client.login(email, password, 'example script');
  lines.push(`signed in as ${login.user.display_name} until ${login.expires_time}`);
  const me = await client.get('/auth/session');
  lines.push(`permission ${me.permission}, tier ${me.tier?.name ?? 'none'}`);
  const products = await client.call('get', '/Products', { query: { numperpage: 5, sort: 'pro_product_id', sdirection: 'DESC' } });
  lines.push(`${products.num_results} products`);
  try {
    await client.action('event_withdraw', { evr_event_registrant_id: 999999, confirm: true });
  } catch (e) {
    if (!(e instanceof GatehouseError)) throw e;
    lines.push(`event_withdraw refused: ${e.status} ${e.errortype}`);
  }
  return lines;
}

const [url, email, password] = [process.env.GATEHOUSE_URL, process.env.GATEHOUSE_EMAIL, process.env.GATEHOUSE_PASSWORD];
if (url && email && password) for (const line of await example(url, email, password)) console.log(line);
