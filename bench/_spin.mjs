import Fastify from 'fastify';
const spin = Number(process.env.SPIN_US ?? 0);
const app = Fastify({ logger: false });
app.get('/hello', async () => { const end = performance.now() + spin / 1000; while (performance.now() < end); return { api_version: '1.0', success_message: '', data: { hello: 'world' } }; });
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(JSON.stringify({ port: app.server.address().port }) + '\n');
process.on('SIGTERM', () => process.exit(0));
