import type { Config } from '../config.js';
import type { CliContext, CliIo } from '../cli/context.js';

/** The context every command runs in: the configuration, the terminal, and how to open the services. */
export function createCliContext(config: Config, io: CliIo): CliContext {
  return {
    config,
    io,
    async withServices(fn, opts = {}) {
      // Loaded here, not at the top: bad input is refused before the database modules load.
      const [{ openCliDatabase }, { migrateWithPlugins }, { createServices }, { MemoryRateLimitStore }] = await Promise.all([
        import('./cli-database.js'),
        import('./plugins.js'),
        import('./compose.js'),
        import('../http/rate-limit/memory-store.js'),
      ]);
      const cli = await openCliDatabase(config, io, opts);
      io.stderr(`gatehouse: using ${cli.description}\n`);
      try {
        const applied = await migrateWithPlugins(cli.database.db);
        // Rate limits are not used by commands; never connect to Redis for them.
        const services = await createServices({ config, database: cli.database, rateLimitStore: new MemoryRateLimitStore(), readCaches: false });
        try {
          return await fn(services, applied);
        } finally {
          await services.close();
        }
      } finally {
        await cli.close();
      }
    },
    async loadPlugins() {
      const { pluginModules } = await import('./plugins.js');
      await pluginModules();
    },
  };
}
