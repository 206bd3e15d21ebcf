import { ConfigError, loadConfig } from './config.js';
import { serveUntilSignal } from './server.js';

// Process entry (`npm start`): serve until SIGTERM/SIGINT, then exit with the shutdown's outcome.
let code: number;
try {
  code = await serveUntilSignal(loadConfig(), (line) => process.stderr.write(`${line}\n`));
} catch (e) {
  process.stderr.write(`gatehouse: ${e instanceof ConfigError ? e.message : String(e)}\n`);
  code = 1;
}
process.exit(code);
