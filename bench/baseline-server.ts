/**
 * The floor the identity benchmark measures Vouch against: bare Fastify answering one indexed
 * SELECT through a `pg` Pool, on the same database and with the same pool size as Vouch.
 * bench/run.ts starts it as `node --import tsx bench/baseline-server.ts` with DATABASE_URL, PORT,
 * HOST and DATABASE_POOL_SIZE.
 */
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_SIZE || 20) });
const app = Fastify();

app.get('/ready', async () => {
  await pool.query('select 1');
  return { status: 'ok' };
});

app.get<{ Params: { bvn: string } }>('/bvn/:bvn', async (request, reply) => {
  const { rows } = await pool.query<{ record: unknown }>(`select record from registry_records where type = 'bvn' and key = $1`, [request.params.bvn]);
  if (rows.length === 0) return reply.status(404).send({ status: 'error', message: 'not found' });
  return { status: 'success', data: rows[0]!.record };
});

async function shutdown(): Promise<void> {
  await app.close();
  await pool.end();
  process.exit(0);
}
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());

await app.listen({ port: Number(process.env.PORT || 0), host: process.env.HOST || '127.0.0.1' });
