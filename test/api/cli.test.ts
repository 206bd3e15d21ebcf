import { existsSync, readdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../helpers/database.js';
import {
  freePort,
  programEnv,
  runGatehouse,
  scratchPostgres,
  startServerProcess,
  tempDataDir,
  type CliResult,
  type ServerProcess,
} from '../helpers/processes.js';

// On PGlite the commands reach a running server's database through its Unix socket (the way an operator
// uses them); with DATABASE_URL they run against a fresh PostgreSQL database of their own.
// A command waits up to 30 s for its turn on the socket; a test outlasts that so that a failure shows the
// command's own error rather than a bare timeout.
describe(`operator CLI (${onPostgres ? 'PostgreSQL' : 'PGlite through the server socket'})`, { timeout: 60_000 }, () => {
  let env: NodeJS.ProcessEnv;
  let server: ServerProcess | undefined;
  let cleanup: () => Promise<void>;
  const cli = (...args: string[]): Promise<CliResult> => runGatehouse(args, env);

  beforeAll(async () => {
    const data = tempDataDir('gh-cli-');
    if (onPostgres) {
      const db = await scratchPostgres();
      env = programEnv({ DATA_DIR: data.dir, DATABASE_URL: db.url });
      cleanup = async () => {
        await db.drop();
        data.remove();
      };
    } else {
      env = programEnv({ DATA_DIR: data.dir, PORT: String(await freePort()) });
      server = await startServerProcess(env);
      cleanup = async () => {
        await server?.stop();
        data.remove();
      };
    }
  });
  afterAll(async () => cleanup?.());

  function expectBadInput(r: CliResult, stderrMatch: RegExp) {
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(stderrMatch);
  }

  it('migrate prints the migrations it applied', async () => {
    const r = await cli('migrate');
    expect(r.code, r.stderr).toBe(0);
    // The server (or the template) already migrated; what remains to apply is nothing.
    expect(r.json).toEqual({ applied: [] });
  });

  describe('user create', () => {
    it('creates a user and prints its id', async () => {
      const r = await cli('user', 'create', '--email', 'ops@example.com', '--password', 'correct horse', '--permission', '5', '--first-name', 'Op', '--last-name', 'Erator');
      expect(r.code, r.stderr).toBe(0);
      expect(Object.keys(r.json)).toEqual(['user_id']);
      expect(Number.isInteger(r.json.user_id)).toBe(true);
    });

    it('refuses a bad email with exit 2', async () => {
      expectBadInput(await cli('user', 'create', '--email', 'not-an-email', '--password', 'long enough'), /not a valid email/);
    });

    it('refuses a short password with exit 2', async () => {
      expectBadInput(await cli('user', 'create', '--email', 'short@example.com', '--password', 'short'), /at least 8/);
    });

    it('refuses a duplicate email with exit 2', async () => {
      expectBadInput(await cli('user', 'create', '--email', 'OPS@example.com', '--password', 'another one'), /already exists/);
    });

    it('refuses a permission outside 0..10 with exit 2', async () => {
      expectBadInput(await cli('user', 'create', '--email', 'x@example.com', '--password', 'long enough', '--permission', '11'), /0 to 10/);
    });
  });

  describe('key create and key revoke', () => {
    let userId: number;
    beforeAll(async () => {
      const r = await cli('user', 'create', '--email', 'keys@example.com', '--password', 'long enough');
      userId = r.json.user_id;
    });

    it('creates a machine key and shows its secret once', async () => {
      const r = await cli(
        'key', 'create', '--user-id', String(userId), '--permission', '3', '--ip-restriction', '127.0.0.1, ::1',
        '--start-time', '2026-01-01 00:00:00', '--expires-time', '2036-01-01 00:00:00', '--name', 'deploy', '--inactive',
      );
      expect(r.code, r.stderr).toBe(0);
      expect(Object.keys(r.json).sort()).toEqual(['api_key_id', 'public_key', 'secret_key']);
      expect(r.json.public_key).toMatch(/^key_[0-9a-f]{24}$/);
      expect(r.json.secret_key).toMatch(/^[0-9a-f]{64}$/);
    });

    it('refuses an unknown user, a bad permission and a bad IP list with exit 2', async () => {
      const user = String(userId);
      const [unknownUser, five, hostName] = await Promise.all([
        cli('key', 'create', '--user-id', '999999', '--permission', '4'),
        cli('key', 'create', '--user-id', user, '--permission', '5'),
        cli('key', 'create', '--user-id', user, '--permission', '4', '--ip-restriction', 'example.com'),
      ]);
      expectBadInput(unknownUser, /no user with id 999999/);
      expectBadInput(five, /permission must be 1, 2, 3 or 4/);
      expectBadInput(hostName, /not an IP address/);
    });

    it('revokes a key once; a second revoke and an unknown key are exit 2', async () => {
      const created = await cli('key', 'create', '--user-id', String(userId), '--permission', '4');
      const id = String(created.json.api_key_id);
      const r = await cli('key', 'revoke', '--api-key-id', id);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toEqual({ revoked: true });
      expectBadInput(await cli('key', 'revoke', '--api-key-id', id), /already revoked/);
      expectBadInput(await cli('key', 'revoke', '--api-key-id', '987654'), /unknown or already revoked/);
    });
  });

  describe('setting get and setting set', () => {
    it('six commands at once all succeed, taking turns on the database', async () => {
      // Regression: a refused connect used to leave its pool's half-open connection holding the server
      // socket's one client slot, so every later command failed until the idle timeout.
      const results = await Promise.all(Array.from({ length: 6 }, () => cli('setting', 'get', 'api_rate_limit_window')));
      for (const r of results) {
        expect(r.code, r.stderr).toBe(0);
        expect(r.json).toEqual({ name: 'api_rate_limit_window', value: 3600 });
      }
    }, 120_000);

    it('reads a setting with its default', async () => {
      const r = await cli('setting', 'get', 'api_rate_limit_window');
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toEqual({ name: 'api_rate_limit_window', value: 3600 });
    });

    it('parses VALUE as JSON when it parses and stores it', async () => {
      const set = await cli('setting', 'set', 'api_min_client_versions', '{"ios":"2.1.0"}');
      expect(set.code, set.stderr).toBe(0);
      expect(set.json).toEqual({ name: 'api_min_client_versions', value: { ios: '2.1.0' } });
      const get = await cli('setting', 'get', 'api_min_client_versions');
      expect(get.json).toEqual({ name: 'api_min_client_versions', value: { ios: '2.1.0' } });
      const int = await cli('setting', 'set', 'api_rate_limit_requests', '250');
      expect(int.json).toEqual({ name: 'api_rate_limit_requests', value: 250 });
    });

    it('takes VALUE as a string when it is not JSON, and keeps text settings as typed', async () => {
      const r = await cli('setting', 'set', 'site_name', 'Members Club');
      expect(r.json).toEqual({ name: 'site_name', value: 'Members Club' });
      const digits = await cli('setting', 'set', 'site_name', '2026');
      expect(digits.json).toEqual({ name: 'site_name', value: '2026' });
    });

    it('refuses an unknown setting with exit 2', async () => {
      expectBadInput(await cli('setting', 'get', 'no_such_setting'), /unknown setting no_such_setting/);
    });

    it('refuses an ill-typed value with exit 2 and leaves the setting alone', async () => {
      expectBadInput(await cli('setting', 'set', 'api_rate_limit_requests', 'many'), /must be an integer/);
      expect((await cli('setting', 'get', 'api_rate_limit_requests')).json.value).toBe(250);
    });

    it('never prints a secret setting', async () => {
      const secret = 'whsec_do_not_print_me';
      const set = await cli('setting', 'set', 'card_processor_webhook_secret', secret);
      expect(set.code, set.stderr).toBe(0);
      expect(set.json).toEqual({ name: 'card_processor_webhook_secret', value: '(set)' });
      const get = await cli('setting', 'get', 'card_processor_webhook_secret');
      expect(get.json).toEqual({ name: 'card_processor_webhook_secret', value: '(set)' });
      expect(set.stdout + set.stderr + get.stdout + get.stderr).not.toContain(secret);
    });

    // Twelve commands, each a process of its own: more time than one command's turn on the socket.
    it("reads and sets an installed plugin's settings, with the plugin disabled (configured before enabling) and enabled", { timeout: 180_000 }, async () => {
      const plugins = (await cli('plugin', 'list')).json.plugins as Array<{ name: string; active: boolean }>;
      expect(plugins.find((p) => p.name === 'mailbox')?.active).toBe(false);
      expect((await cli('setting', 'get', 'mailbox_domain')).json).toEqual({ name: 'mailbox_domain', value: 'localhost' });
      const domain = await cli('setting', 'set', 'mailbox_domain', 'mail.example.org');
      expect(domain.code, domain.stderr).toBe(0);
      expect(domain.json).toEqual({ name: 'mailbox_domain', value: 'mail.example.org' });
      expect((await cli('setting', 'set', 'api_relay_rate_limit_requests', '50')).json).toEqual({ name: 'api_relay_rate_limit_requests', value: 50 });
      const key = await cli('setting', 'set', 'assistant_api_key', 'sk-never-printed');
      expect(key.json).toEqual({ name: 'assistant_api_key', value: '(set)' });
      expect(key.stdout + key.stderr).not.toContain('sk-never-printed');
      expectBadInput(await cli('setting', 'set', 'mailbox_smtp_port', 'many'), /setting mailbox_smtp_port must be an integer/);

      expect((await cli('plugin', 'enable', 'mailbox')).json).toEqual({ name: 'mailbox', active: true });
      try {
        expect((await cli('setting', 'get', 'mailbox_domain')).json).toEqual({ name: 'mailbox_domain', value: 'mail.example.org' });
        expect((await cli('setting', 'get', 'api_relay_rate_limit_requests')).json).toEqual({ name: 'api_relay_rate_limit_requests', value: 50 });
        expect((await cli('setting', 'set', 'mailbox_smtp_max_message_bytes', '2097152')).json).toEqual({ name: 'mailbox_smtp_max_message_bytes', value: 2097152 });
        expect((await cli('setting', 'get', 'mailbox_smtp_max_message_bytes')).json.value).toBe(2097152);
      } finally {
        await cli('plugin', 'disable', 'mailbox');
      }
      expectBadInput(await cli('setting', 'get', 'mailbox_no_such_setting'), /unknown setting mailbox_no_such_setting/);
    });
  });

  describe('plugin', () => {
    it('lists the plugins', async () => {
      const r = await cli('plugin', 'list');
      expect(r.code, r.stderr).toBe(0);
      expect(Array.isArray(r.json.plugins)).toBe(true);
      for (const p of r.json.plugins) expect(Object.keys(p).sort()).toEqual(['active', 'description', 'name', 'version']);
    });

    it('enables and disables a discovered plugin', async (ctx) => {
      const first = (await cli('plugin', 'list')).json.plugins[0];
      if (!first) return ctx.skip();
      expect((await cli('plugin', 'enable', first.name)).json).toEqual({ name: first.name, active: true });
      expect((await cli('plugin', 'disable', first.name)).json).toEqual({ name: first.name, active: false });
    });

    it('refuses an unknown plugin with exit 2', async () => {
      expectBadInput(await cli('plugin', 'enable', 'no_such_plugin'), /unknown plugin no_such_plugin/);
    });
  });

  describe('task run', () => {
    it('runs one task by name and prints its result', async () => {
      const r = await cli('task', 'run', 'purge_request_logs');
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toEqual({ ran: [{ task: 'purge_request_logs', result: { deleted: expect.any(Number), retention_days: 90 } }] });
    });

    it('runs every task for all', async () => {
      const r = await cli('task', 'run', 'all');
      expect(r.code, r.stderr).toBe(0);
      expect(r.json.ran.map((o: { task: string }) => o.task)).toContain('purge_request_logs');
    });

    it('refuses an unknown task with exit 2', async () => {
      expectBadInput(await cli('task', 'run', 'no_such_task'), /unknown task no_such_task/);
    });
  });

  describe('backup create', () => {
    it(onPostgres ? 'writes a pg_dump into DATA_DIR/backups and prints its path and size' : 'is taken by the running server, with its progress on stderr', async () => {
      const r = await cli('backup', 'create');
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toEqual({ path: expect.stringMatching(onPostgres ? /backups\/gatehouse-.*\.pgdump$/ : /backups\/gatehouse-.*\.pglite\.tar\.gz$/), size_bytes: expect.any(Number) });
      expect(r.json.size_bytes).toBeGreaterThan(0);
      expect(r.stderr).toMatch(onPostgres ? /^gatehouse: using PostgreSQL at DATABASE_URL=postgres:/m : /^gatehouse: using the embedded database in .* backed up by the running server \(pid \d+\)/m);
      expect(r.stderr).toMatch(/^backup \[#{24}\] 100% done$/m);
    });
  });

  it('says on stderr which database each command used', async () => {
    const r = await cli('setting', 'get', 'site_name');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      onPostgres
        ? /^gatehouse: using PostgreSQL at DATABASE_URL=postgres:\/\/postgres@127\.0\.0\.1:5432\/gh_cli_\w+$/m
        : /^gatehouse: using the embedded database in \S+ \(DATA_DIR\), through the running server's socket \S+\.s\.PGSQL\.5432 \(server pid \d+\)$/m,
    );
  });

  it('refuses an unknown command and a missing subcommand with exit 2 and the usage', async () => {
    expectBadInput(await cli('frobnicate'), /unknown command 'frobnicate'[\s\S]*usage/);
  });
});

describe.skipIf(onPostgres)('operator CLI on a data directory with no database', () => {
  // The usual mistake: a command run from another directory than the server's. Nothing may be created.
  it('exits 2 naming the directory and how to point at the server, and creates nothing', async () => {
    const data = tempDataDir('gh-cli-empty-');
    try {
      const missing = path.join(data.dir, 'not-yet');
      const commands = [['setting', 'get', 'site_name'], ['user', 'create', '--email', 'a@example.com', '--password', 'long enough'], ['task', 'run', 'all'], ['tier', 'list'], ['backup', 'create']];
      const runs = [data.dir, missing].flatMap((dir) => commands.map(async (args) => ({ dir, args, r: await runGatehouse(args, programEnv({ DATA_DIR: dir })) })));
      for (const { dir, args, r } of await Promise.all(runs)) {
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
        expect(r.stdout).toBe('');
        expect(r.stderr).toContain(`no database in ${dir} (looked for ${dir}/db), and this command does not create one.`);
        expect(r.stderr).toContain('DATA_DIR=/path/to/the/server/data');
        expect(r.stderr).toContain('DATABASE_URL=postgres://');
      }
      expect(readdirSync(data.dir)).toEqual([]);
    } finally {
      data.remove();
    }
  });

  it('serve checks the port before creating anything', async () => {
    const data = tempDataDir('gh-cli-port-');
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (taken.address() as net.AddressInfo).port;
      const dir = path.join(data.dir, 'data');
      const r = await runGatehouse(['serve'], programEnv({ DATA_DIR: dir, PORT: String(port) }));
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`port ${port} is already in use on 127.0.0.1`);
      expect(existsSync(dir)).toBe(false);
    } finally {
      taken.close();
      data.remove();
    }
  });
});
