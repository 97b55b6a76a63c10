/**
 * The floor the benchmarks measure Vouch against: bare Fastify answering indexed SELECTs through
 * a `pg` Pool, on the same database and with the same pool size as Vouch, with no auth, no
 * rendering and no response schema. `/bvn/:bvn` is the identity section's floor; `/addresses/:org`
 * (one statement for the page and its total, the shown personal columns decrypted, rows otherwise
 * sent as PostgreSQL gives them) the lists section's, and `/addresses-logged/:org` the same page
 * with the access-log row Vouch writes for it.
 * bench/run.ts starts it as `node --import tsx bench/baseline-server.ts` with DATABASE_URL, PORT,
 * HOST and DATABASE_POOL_SIZE.
 */
import Fastify from 'fastify';
import pg from 'pg';
import { ADDRESS_RECORD_COLUMNS } from '../src/addresses/render.js';
import { loadConfig } from '../src/config.js';
import { PROTECTED_COLUMNS } from '../src/platform/crypto/fields.js';
import { openKeyring } from '../src/platform/crypto/open.js';
import { openDatabase } from '../src/platform/db/database.js';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_SIZE || 20) });
// The registry is encrypted at rest (docs/data-protection.md): the floor does the least any lookup
// must, a blind index to find the row and one decryption of its record, with the data keys
// unwrapped once at start as Vouch does.
const keys = await openDatabase({ url: process.env.DATABASE_URL, poolSize: 1 });
const keyring = await openKeyring(keys, loadConfig());
await keys.close();
const app = Fastify();

app.get('/ready', async () => {
  await pool.query('select 1');
  return { status: 'ok' };
});

app.get<{ Params: { bvn: string } }>('/bvn/:bvn', async (request, reply) => {
  const { rows } = await pool.query<{ record: string }>(`select record from registry_records where type = 'bvn' and key = $1`, [keyring.blindIndex('bvn', request.params.bvn)]);
  if (rows.length === 0) return reply.status(404).send({ status: 'error', message: 'not found' });
  return { status: 'success', data: JSON.parse(keyring.decrypt(rows[0]!.record)) as unknown };
});

// The columns an address record is rendered from, the personal ones decrypted (each a JSON value
// under the data key, as the field protection stores them): what any server that keeps these rows
// encrypted must do to show them. No rendering, no auth, no access log.
const ADDRESS_COLUMNS = ADDRESS_RECORD_COLUMNS.map((column) => `page.${column}`).join(', ');
const ADDRESS_PERSONAL = Object.keys(PROTECTED_COLUMNS.address_verifications!).filter((column) => (ADDRESS_RECORD_COLUMNS as readonly string[]).includes(column));

const PAGE_ROWS = `select * from address_verifications
       where org_id = $1 and mode = 'live' and seq > counter.value - $2::bigint - 20 and seq <= counter.value - $2::bigint
       order by seq desc`;
const COUNTER = `counter as (select value from sequences where org_id = $1 and mode = 'live' and kind = 'address')`;
/**
 * One page of the organization's address rows at `offset` and their total, in one statement; with
 * `logged`, the same statement also writes the access-log row Vouch writes for a `/v1` list page
 * (one row naming the page's records in page order, committed before the answer). That is the floor
 * of a server that must log every list it shows: what the log's write costs on its own, beside the
 * bare read (`/addresses-logged/:org`; bench/sections/lists.ts reports it, docs/benchmarks.md).
 * The texts are made once: the floor builds no SQL per request.
 */
const ADDRESS_PAGE = {
  bare: `with ${COUNTER}
       select counter.value as total, ${ADDRESS_COLUMNS} from counter left join lateral (${PAGE_ROWS}) page on true`,
  // The log row reads the page a second time, so the logged statement names it (a CTE).
  logged: `with ${COUNTER}, page as (select window_rows.* from counter cross join lateral (${PAGE_ROWS}) window_rows),
       logged_access as (
         insert into personal_data_access (org_id, mode, actor_kind, actor_id, channel, action, resource, resource_ids, ip)
         select $1, 'live', 'api', 'baseline', 'api', 'list', 'address', shown.ids, '127.0.0.1'
         from (select array_agg(page.id::text order by page.seq desc) as ids from page) shown
         where shown.ids is not null)
       select counter.value as total, ${ADDRESS_COLUMNS} from counter left join page on true order by page.seq desc`,
};

async function addresses(org: string, query: { offset?: string }, logged: boolean) {
  const offset = Number(query.offset ?? 0);
  const { rows } = await pool.query<Record<string, unknown>>(logged ? ADDRESS_PAGE.logged : ADDRESS_PAGE.bare, [org, offset]);
  for (const row of rows) {
    for (const column of ADDRESS_PERSONAL) {
      const value = row[column];
      if (typeof value === 'string') row[column] = JSON.parse(keyring.decrypt(value)) as unknown;
    }
  }
  return { status: 'success', _pagination: { limit: 20, offset, total: Number(rows[0]?.total ?? 0) }, data: rows };
}

type AddressRoute = { Params: { org: string }; Querystring: { offset?: string } };
app.get<AddressRoute>('/addresses/:org', (request) => addresses(request.params.org, request.query, false));
app.get<AddressRoute>('/addresses-logged/:org', (request) => addresses(request.params.org, request.query, true));

async function shutdown(): Promise<void> {
  await app.close();
  await pool.end();
  process.exit(0);
}
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());

await app.listen({ port: Number(process.env.PORT || 0), host: process.env.HOST || '127.0.0.1' });
