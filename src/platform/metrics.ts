import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sql, type Kysely } from 'kysely';
import client from 'prom-client';
import type { Database } from './db/database.js';
import type { DB } from './db/schema.js';
import { ApiError } from './errors.js';

/**
 * Prometheus metrics (docs/operations.md). The counters and histograms below belong to the
 * process: the API, the in-process webhook worker and the upstream router all count into them.
 * What is read from the database (queue depth, unsent mail) or from live objects (connections,
 * upstream circuits) is gauged at scrape time by the app that serves `/metrics`.
 */
export const processRegistry = new client.Registry();
client.collectDefaultMetrics({ register: processRegistry, prefix: 'vouch_' });

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const metrics = {
  httpRequests: new client.Counter({
    name: 'vouch_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [processRegistry],
  }),
  httpDuration: new client.Histogram({
    name: 'vouch_http_request_duration_seconds',
    help: 'Time from request to answer, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: SECONDS,
    registers: [processRegistry],
  }),
  lookups: new client.Counter({
    name: 'vouch_identity_lookups_total',
    help: 'Identity lookups (biometrics included) by type, mode and outcome: success, not_found, insufficient_funds, unavailable, error',
    labelNames: ['type', 'mode', 'outcome'] as const,
    registers: [processRegistry],
  }),
  walletCharges: new client.Counter({
    name: 'vouch_wallet_charges_total',
    help: 'Live work charged to a wallet, by billable type',
    labelNames: ['type'] as const,
    registers: [processRegistry],
  }),
  walletChargedKobo: new client.Counter({
    name: 'vouch_wallet_charged_kobo_total',
    help: 'Kobo charged to wallets, by billable type',
    labelNames: ['type'] as const,
    registers: [processRegistry],
  }),
  paymentRequired: new client.Counter({
    name: 'vouch_payment_required_total',
    help: 'Answers 402 (the wallet could not pay for the work), by method and route template',
    labelNames: ['method', 'route'] as const,
    registers: [processRegistry],
  }),
  faceMatchDuration: new client.Histogram({
    name: 'vouch_face_match_duration_seconds',
    help: 'Time to compare a supplied photo (or a session\'s frames) with the photo on record, by outcome (match, no_match, retake: no frame good enough, error)',
    labelNames: ['outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8],
    registers: [processRegistry],
  }),
  webhookAttempts: new client.Counter({
    name: 'vouch_webhook_attempts_total',
    help: 'Webhook delivery attempts by endpoint origin and outcome (delivered, failed)',
    labelNames: ['endpoint', 'outcome'] as const,
    registers: [processRegistry],
  }),
  webhookCircuitOpen: new client.Gauge({
    name: 'vouch_webhook_circuit_open',
    help: '1 while an endpoint origin\'s breaker holds its deliveries, else 0',
    labelNames: ['endpoint'] as const,
    registers: [processRegistry],
  }),
  upstreamLookups: new client.Counter({
    name: 'vouch_upstream_lookups_total',
    help: 'Lookups asked of an upstream source, by source and outcome (found, not_found, or the failure: connection, timeout, http, malformed, refused)',
    labelNames: ['source', 'outcome'] as const,
    registers: [processRegistry],
  }),
  upstreamFaceMatches: new client.Counter({
    name: 'vouch_upstream_face_matches_total',
    help: 'Face matches asked of an upstream source, by source and outcome (match, no_match, not_found, or the failure: connection, timeout, http, malformed, refused)',
    labelNames: ['source', 'outcome'] as const,
    registers: [processRegistry],
  }),
  upstreamDuration: new client.Histogram({
    name: 'vouch_upstream_duration_seconds',
    help: 'Time an upstream source took to answer or fail, by source',
    labelNames: ['source'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16],
    registers: [processRegistry],
  }),
  upstreamCircuit: new client.Gauge({
    name: 'vouch_upstream_circuit_state',
    help: 'An upstream source\'s circuit in this process: 0 closed, 1 half-open, 2 open',
    labelNames: ['source'] as const,
    registers: [processRegistry],
  }),
  screeningListSyncs: new client.Counter({
    name: 'vouch_screening_list_syncs_total',
    help: 'Watchlist syncs by source and outcome (updated, unchanged, not_modified, failed)',
    labelNames: ['source', 'outcome'] as const,
    registers: [processRegistry],
  }),
  screeningListSyncFailures: new client.Counter({
    name: 'vouch_screening_list_sync_failures_total',
    help: 'Watchlist syncs that failed (download or refused file), by source: the list kept its version',
    labelNames: ['source'] as const,
    registers: [processRegistry],
  }),
};

export const CIRCUIT_VALUES = { closed: 0, half_open: 1, open: 2 } as const;

/** The endpoint label of a webhook URL: its origin, never its path or query (they can hold a customer's token). */
export function endpointLabel(url: string): string {
  return URL.canParse(url) ? new URL(url).origin : '(unparsable URL)';
}

/** What the app gauges at scrape time, in a registry of its own (one per app: tests build several). */
function appRegistry(database: Database): client.Registry {
  const registry = new client.Registry();
  const db: Kysely<DB> = database.db;
  new client.Gauge({
    name: 'vouch_db_connections',
    help: 'Database connections of this process by state (in_use, idle), queries waiting for one, and the pool size',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const stats = database.connections();
      this.set({ state: 'in_use' }, stats.total - stats.idle);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
      this.set({ state: 'max' }, stats.max);
    },
  });
  new client.Gauge({
    name: 'vouch_webhook_queue_depth',
    help: 'Webhook deliveries still to make (all organizations), by whether they are due now',
    labelNames: ['due'] as const,
    registers: [registry],
    async collect() {
      const { rows } = await sql<{ due: number; later: number }>`
        select count(*) filter (where next_attempt_at <= now())::int as due, count(*) filter (where next_attempt_at > now())::int as later
        from webhook_deliveries where status = 'pending'`.execute(db);
      this.set({ due: 'now' }, rows[0]?.due ?? 0);
      this.set({ due: 'later' }, rows[0]?.later ?? 0);
    },
  });
  new client.Gauge({
    name: 'vouch_mail_outbox_unsent',
    help: 'Live respondent emails in the outbox not sent yet, by whether the last try failed (test-mode messages are never sent)',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const { rows } = await sql<{ waiting: number; failed: number }>`
        select count(*) filter (where error is null)::int as waiting, count(*) filter (where error is not null)::int as failed
        from outbox_messages where sent_at is null and mode = 'live'`.execute(db);
      this.set({ state: 'waiting' }, rows[0]?.waiting ?? 0);
      this.set({ state: 'failed' }, rows[0]?.failed ?? 0);
    },
  });
  screeningListGauges(registry, db);
  return registry;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * `GET /metrics` in Prometheus's text format, for a scraper holding VOUCH_METRICS_TOKEN as a
 * bearer token; without a configured token the route answers 404, as if it did not exist.
 * Every answer is also counted: method, route template (never the URL: it holds identifiers)
 * and status.
 */
export function registerMetrics(app: FastifyInstance, database: Database, token: string | undefined): void {
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done) => {
    const route = request.routeOptions.url ?? '(unmatched)';
    const labels = { method: request.method, route, status: String(reply.statusCode) };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    if (reply.statusCode === 402) metrics.paymentRequired.inc({ method: request.method, route });
    done();
  });
  const registry = appRegistry(database);
  const expected = token ? digest(`Bearer ${token}`) : undefined;
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!expected) throw new ApiError('NOT_FOUND_ERROR', 'Route GET /metrics not found: set VOUCH_METRICS_TOKEN to turn metrics on');
    if (!timingSafeEqual(digest(request.headers.authorization ?? ''), expected)) {
      void reply.header('www-authenticate', 'Bearer realm="metrics"');
      throw new ApiError('ACCESS_DENIED', 'Send the metrics token: "Authorization: Bearer <VOUCH_METRICS_TOKEN>"');
    }
    const merged = client.Registry.merge([processRegistry, registry]);
    void reply.type(merged.contentType);
    return merged.metrics();
  });
}

/** Each watchlist's freshness (docs/screening-lists.md), read from screening_sources at scrape time. */
function screeningListGauges(registry: client.Registry, db: Kysely<DB>): void {
  type Row = { name: string; current_version: number; entity_count: number; age: number | null; failed: boolean };
  // One query per scrape, shared by the four gauges.
  let pending: Promise<Row[]> | undefined;
  const rows = () =>
    (pending ??= sql<Row>`
      select name, current_version, entity_count, extract(epoch from now() - last_success_at)::float8 as age, coalesce(last_outcome = 'failed', false) as failed
      from screening_sources order by name`
      .execute(db)
      .then((result) => result.rows)
      .finally(() => setTimeout(() => (pending = undefined), 0)));
  const gauge = (name: string, help: string, value: (row: Row) => number | null) =>
    new client.Gauge({
      name,
      help,
      labelNames: ['source'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        for (const row of await rows()) {
          const v = value(row);
          if (v !== null) this.set({ source: row.name }, v);
        }
      },
    });
  gauge('vouch_screening_list_entities', 'Entities in the version of each watchlist source that screenings use', (row) => row.entity_count);
  gauge('vouch_screening_list_version', 'The version of each watchlist source that screenings use (0: none loaded)', (row) => row.current_version);
  gauge('vouch_screening_list_last_success_age_seconds', 'Seconds since the last successful sync of each source with a URL (a 304 counts)', (row) => row.age);
  gauge('vouch_screening_list_sync_ok', '1 when the last sync of a source succeeded, 0 when it failed (its version keeps serving)', (row) => (row.failed ? 0 : 1));
}
