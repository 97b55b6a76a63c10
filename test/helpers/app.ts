import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { AccountsService, type CreateOrganizationInput, type CreatedOrganization } from '../../src/accounts/service.js';
import { buildApp, type AppOptions } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { LivenessThresholds } from '../../src/identities/liveness/settings.js';
import { livenessEngineFor } from '../../src/sessions/liveness.js';
import { setWebhookEndpoint } from '../../src/webhooks/endpoints.js';
import { openTestDatabase, TEST_ENCRYPTION_KEY, type TestDatabase } from './database.js';

export interface TestContext {
  app: FastifyInstance;
  database: TestDatabase;
  accounts: AccountsService;
  /** Every log line the app wrote, raw. */
  logs: string[];
  /** A new organization (enabled, risk NONE, funded ₦1,000 unless told otherwise). */
  org(input?: Partial<CreateOrganizationInput>): Promise<CreatedOrganization>;
  close(): Promise<void>;
}

/** One app and one database per test file; each test makes the organizations it needs. */
/** The configuration of a test app: defaults, private URLs allowed (loopback receivers), no worker unless asked. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({ VOUCH_ALLOW_PRIVATE_URLS: '1', VOUCH_WORKER: 'off', LOG_LEVEL: 'info' }),
    publicUrl: 'http://127.0.0.1:8080',
    // The key the test databases' data keys are wrapped by (test/helpers/database.ts).
    encryptionKey: TEST_ENCRYPTION_KEY,
    ...overrides,
  };
}

export interface TestContextOptions extends Pick<AppOptions, 'liveRegistry' | 'upstreams' | 'idempotency' | 'livenessEngine' | 'faceMatcher'> {
  config?: Partial<Config>;
  /**
   * Every organization `org()` makes gets this webhook endpoint in both modes. An event of an
   * organization without an endpoint is stored without its body, so tests that read the bodies
   * of the events their flows queue set one (NOWHERE_WEBHOOK_URL when nothing is sent).
   */
  webhookUrl?: string;
  /** The liveness engine's thresholds where a test needs others than the defaults (the app's own engine otherwise). */
  livenessThresholds?: Partial<LivenessThresholds>;
}

/** A webhook URL nothing answers at (the discard port): for tests that read queued bodies without running a worker. */
export const NOWHERE_WEBHOOK_URL = 'http://127.0.0.1:9/vouch-webhooks';

export async function buildTestContext(options: TestContextOptions = {}): Promise<TestContext> {
  const database = await openTestDatabase();
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const app = await buildApp({
    config: testConfig(options.config),
    database,
    logStream,
    liveRegistry: options.liveRegistry,
    upstreams: options.upstreams,
    idempotency: options.idempotency,
    faceMatcher: options.faceMatcher,
    livenessEngine: options.livenessEngine ?? (options.livenessThresholds ? livenessEngineFor(database.db, options.livenessThresholds) : undefined),
  });
  await app.ready();
  const accounts = new AccountsService(database.db);
  let counter = 0;
  return {
    app,
    database,
    accounts,
    logs,
    org: async (input = {}) => {
      const org = await accounts.create({ name: `Org ${++counter}`, enabled: true, riskLevel: 'NONE', payloadType: 'FULL', fund: 100_000, ...input });
      const url = options.webhookUrl;
      if (url) for (const mode of ['test', 'live'] as const) await setWebhookEndpoint(database.db, { orgId: org.id, mode }, { url }, { allowPrivateUrls: true });
      return org;
    },
    close: async () => {
      await app.close();
      await database.cleanup();
    },
  };
}

export function bearer(secret: string) {
  return { authorization: `Bearer ${secret}` };
}

/**
 * An answer's body without its `requestId` (every error body carries its request's id,
 * src/platform/request-context.ts): for tests that two answers are alike, which they are in all
 * but that.
 */
export function sansRequestId(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const { requestId: _requestId, ...rest } = body as Record<string, unknown>;
  return rest;
}
