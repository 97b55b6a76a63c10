import net from 'node:net';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig } from '../helpers/app.js';
import { openTestDatabase, type TestDatabase } from '../helpers/database.js';

/** A TCP server standing in for Redis: it answers nothing, and tells when the client hangs up. */
async function silentRedis(): Promise<{ url: string; connected: Promise<void>; hungUp: Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let connected!: () => void;
  let hungUp!: () => void;
  const server = net.createServer((socket) => {
    sockets.add(socket);
    connected();
    socket.on('error', () => {});
    // Read and drop the client's commands, so that its end of the connection is seen.
    socket.resume();
    socket.on('close', () => hungUp());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    connected: new Promise((resolve) => (connected = resolve)),
    hungUp: new Promise((resolve) => (hungUp = resolve)),
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('building the app, a step that fails', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase();
    // The file links' signing key is loaded after the rate limits' Redis client is made.
    await sql`create function refuse_signing_key() returns trigger language plpgsql as $$
                begin raise exception 'no signing key today'; end $$`.execute(database.db);
    await sql`create trigger refuse_signing_key before insert on settings for each row
                when (new.name = 'file_url_signing_key') execute function refuse_signing_key()`.execute(database.db);
  });
  afterAll(async () => {
    if (!database) return;
    // The embedded database goes on to this worker's next file (test/helpers/database.ts), whose
    // reset empties the tables but leaves triggers.
    await sql`drop trigger if exists refuse_signing_key on settings`.execute(database.db);
    await sql`drop function if exists refuse_signing_key()`.execute(database.db);
    await database.cleanup();
  });

  it('closes what the steps before it opened: the Redis client hangs up, so a failed start can exit', { timeout: 30_000 }, async () => {
    // A server whose start failed here kept its Redis connection (and the router's and guarantors'
    // timers) open: the app was never returned, so nobody could close it.
    const redis = await silentRedis();
    try {
      const building = buildApp({ config: testConfig({ redisUrl: redis.url }), database, logStream: pino.destination({ dest: '/dev/null', sync: true }) });
      await redis.connected;
      await expect(building).rejects.toThrow(/no signing key today/);
      const hungUp = await Promise.race([redis.hungUp.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 3_000))]);
      expect(hungUp, 'the Redis connection was still open 3 s after the build failed').toBe(true);
    } finally {
      await redis.close();
    }
  });
});
