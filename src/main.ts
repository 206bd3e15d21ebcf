import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.js';
import { serveUntilSignal } from './boot/server.js';

// Process entry (`npm start`, and `npm run dev` with --dev): serve until SIGTERM/SIGINT, then exit with the
// shutdown's outcome. npm runs this process directly (`exec node ...`), so npm's SIGTERM reaches it.
let code: number;
try {
  const { values } = parseArgs({ options: { dev: { type: 'boolean', default: false } }, strict: true, allowPositionals: false });
  code = await serveUntilSignal(loadConfig(), (line) => process.stderr.write(`${line}\n`), { dev: values.dev });
} catch (e) {
  process.stderr.write(`gatehouse: ${e instanceof ConfigError || e instanceof TypeError ? e.message : String(e)}\n`);
  code = 1;
}
process.exit(code);
