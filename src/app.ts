import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { DestinationStream } from 'pino';
import { addressRoutes } from './addresses/routes.js';
import { addressTaskSource } from './addresses/tasks.js';
import { agentRoutes } from './agents/routes.js';
import { businessRoutes } from './businesses/routes.js';
import { businessTaskSource } from './businesses/tasks.js';
import { fastifyTrustProxy, type Config } from './config.js';
import { employmentRoutes } from './employments/routes.js';
import { fileRoutes } from './files/routes.js';
import { openFileStore } from './files/open-store.js';
import { fileUrls, loadSigningKey } from './files/urls.js';
import { guarantorRoutes, startGuarantors } from './guarantors/routes.js';
import { FaceMatcher } from './identities/biometrics/matcher.js';
import { FaceMatchCapacity } from './identities/biometrics/capacity.js';
import { biometricsRoutes } from './identities/biometrics/routes.js';
import { IdentityLookups } from './identities/lookups.js';
import { EmbeddedRegistry } from './identities/registry/embedded.js';
import type { Registry } from './identities/registry/registry.js';
import { SandboxRegistry } from './identities/registry/sandbox.js';
import { identityRoutes } from './identities/routes.js';
import { lookupScreener } from './identities/screening.js';
import { UpstreamRouter, type RouterSettings } from './identities/upstreams/router.js';
import { openKeyring } from './platform/crypto/open.js';
import type { Database } from './platform/db/database.js';
import { resolveDotSegments } from './platform/dot-segments.js';
import { clientErrorHandler, frameworkErrorHandler, MAX_PARAM_LENGTH, registerErrorHandling } from './platform/errors.js';
import { loggerOptions, VouchLogController } from './platform/logging.js';
import { genReqId, registerRequestContext } from './platform/request-context.js';
import { lazySchemaController } from './platform/lazy-schemas.js';
import { registerIdempotency, type IdempotencySettings } from './platform/idempotency.js';
import { registerInputRules } from './platform/input.js';
import { registerMetrics } from './platform/metrics.js';
import { registerRateLimits } from './platform/rate-limit.js';
import { registerSecurityHeaders } from './platform/security-headers.js';
import { isWebAppPath, registerWebApp } from './platform/web.js';
import { checkOrigin, portalApi } from './portal/plugin.js';
import { isRespondentPath, respondentPages, sendBadRequestPage } from './respondents/routes.js';
import { respondentsFor } from './respondents/service.js';
import { screeningRoutes } from './screening/routes.js';
import { startScreening } from './screening/start.js';
import { endUserRoutes } from './sessions/end-user-routes.js';
import { SessionFlow } from './sessions/flow.js';
import { FrameUploadPlaces } from './sessions/frame-upload-places.js';
import { linkPages } from './sessions/links/public-routes.js';
import { livenessEngineFor, type EngineSource } from './sessions/liveness.js';
import { sessionRoutes } from './sessions/routes.js';
import { hostedFlowRoutes } from './sessions/hosted/routes.js';

export interface AppOptions {
  config: Config;
  database: Database;
  /** Where log lines go (tests capture them); stdout by default. */
  logStream?: DestinationStream;
  /** The live registry; by default the upstream router over the configured sources and the embedded tables. */
  liveRegistry?: Registry;
  /** The upstream router's breaker, reload and health settings (tests shorten them). */
  upstreams?: Partial<RouterSettings>;
  /** Face matching for biometrics; the process's shared face model by default. */
  faceMatcher?: FaceMatcher;
  /** Idempotency-Key timings (tests shorten them). */
  idempotency?: Partial<IdempotencySettings>;
  /** The liveness engine of verification sessions; the process's shared one by default. */
  livenessEngine?: EngineSource;
  /** The face-match places (tests hold some to see a session's match wait); made from the config when absent. */
  faceMatchCapacity?: FaceMatchCapacity;
  /** The places of liveness frames uploads in flight (tests watch them fill); made from the config when absent. */
  frameUploads?: FrameUploadPlaces;
}

/**
 * How long a request may take to arrive, body included (Node's `server.requestTimeout`, which
 * Fastify leaves off): a client that sends its body slowly, or never, is answered 408 and
 * disconnected instead of holding a connection for ever. Five minutes, Node's own default: the
 * largest liveness frames form (7.6 MB) arrives in time at 210 kbit/s, a poor mobile uplink, and
 * a field agent's report as the field app sends it (photos of ~300 KB) at far less
 * (docs/deploy.md, "Production checklist").
 */
export const REQUEST_TIMEOUT_MS = 5 * 60_000;

const API_DESCRIPTION = `Vouch verifies people and businesses in Nigeria: identity lookups (BVN, NIN, vNIN,
drivers license, voters card, CAC, TIN), face match against the photo on record, and field verifications.

Authenticate with \`Authorization: Bearer <secret>\`: a test secret (\`sk_test_...\`) runs in the sandbox
against fixed test identities and is never charged; a live secret (\`sk_live_...\`) reads the live registry
and charges the wallet.`;

/**
 * The Content-Security-Policy of every answer: the web app loads only its own scripts; Mantine
 * injects style tags; photos may come from the S3 store's own origin.
 */
function contentSecurity(config: Config) {
  const photos = config.s3 ? [new URL(config.s3.endpoint).origin] : [];
  return {
    defaultSrc: ["'self'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'", "'unsafe-inline'"],
    imgSrc: ["'self'", 'data:', 'blob:', ...photos],
    connectSrc: ["'self'"],
    fontSrc: ["'self'", 'data:'],
    objectSrc: ["'none'"],
    frameAncestors: ["'none'"],
    formAction: ["'self'"],
    baseUri: ["'self'"],
    // Self-hosted deployments may run on plain http inside a network: do not rewrite to https.
    upgradeInsecureRequests: null,
  };
}

/** The live registry: configured upstreams in order, then the embedded tables (docs/upstreams.md). */
async function startRouter(app: FastifyInstance, { database, config, upstreams }: AppOptions): Promise<Registry> {
  const router = await UpstreamRouter.start({
    db: database.db,
    config,
    log: app.log,
    embedded: new EmbeddedRegistry(database.db),
    settings: upstreams,
  });
  app.addHook('onClose', () => router.close());
  app.decorate('upstreamRouter', router);
  return router;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The live registry's router, when the app made one (tests catch it up after changing sources). */
    upstreamRouter?: UpstreamRouter;
  }
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const app = Fastify({
    logger: loggerOptions(config.logLevel, options.logStream),
    // X-Request-Id: the caller's when safe, else a new one (src/platform/request-context.ts).
    genReqId,
    // Log lines label it requestId; health checks and static files log at debug.
    logController: new VouchLogController(),
    bodyLimit: 1024 * 1024,
    requestTimeout: REQUEST_TIMEOUT_MS,
    ajv: { customOptions: { coerceTypes: 'array', allErrors: true } },
    return503OnClosing: true,
    trustProxy: fastifyTrustProxy(config.trustProxy),
    // An over-long id reaches its route, whose own validation answers (400 or 404 in the family's
    // style). `/v1/verifications/addresses/` and `//v1/...` are the route without the extra slash.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH, ignoreTrailingSlash: true, ignoreDuplicateSlashes: true },
    // `/./api/me` is `/api/me`, as a browser would read it (the router matches paths literally).
    rewriteUrl: resolveDotSegments,
    // A mangled respondent link gets the respondents' page; every other routing failure its family's JSON.
    frameworkErrors: (error, request, reply) =>
      error.code === 'FST_ERR_BAD_URL' && isRespondentPath(request.url) ? sendBadRequestPage(reply) : frameworkErrorHandler(error, request, reply),
    clientErrorHandler,
    schemaController: lazySchemaController(),
  });
  // A step that fails closes what those before it opened (the Redis client, the upstream router,
  // the guarantors' timers): their onClose hooks run, and a failed start can exit.
  try {
    await assemble(app, options);
  } catch (err) {
    await app.close().catch(() => undefined);
    throw err;
  }
  return app;
}

/** The plugins, hooks and routes of the app, each closing what it opens in an onClose hook. */
async function assemble(app: FastifyInstance, options: AppOptions): Promise<void> {
  const { database, config } = options;
  // Personal data is encrypted at rest: the keyring is loaded before any route can touch it.
  if (!database.protection.keyring) await openKeyring(database, config, { poll: true });
  app.addHook('onClose', async () => database.protection.keyring?.close());
  // Before anything else: every request's id and trace, on its answer and in its log lines.
  const requestContext = registerRequestContext(app);
  // Bodies are JSON (multipart where a route says so); anything else is 415, never a string body.
  app.removeContentTypeParser('text/plain');
  registerInputRules(app);
  registerSecurityHeaders(app, { contentSecurityPolicy: { directives: contentSecurity(config) } });
  const webApp = await registerWebApp(app);
  registerErrorHandling(app, { accepts: isWebAppPath, answer: webApp });
  registerMetrics(app, database, config.metricsToken);
  // Limited requests are refused before they can claim an idempotency key.
  await registerRateLimits(app, database, config);
  registerIdempotency(app, database.db, options.idempotency);
  // After idempotency's hook: a kept error answer takes the id of the request that replays it.
  requestContext.registerErrorBodies();

  await app.register(swagger, {
    // Every operation states who may call it (docs/openapi.md): a route whose schema names no
    // security takes no credentials (signed file links, the portal's sign-in and reset pages),
    // and says so with `security: []` rather than leaving client generators to guess.
    transform: ({ schema, url }) => ({ schema: !schema || schema.hide || schema.security ? schema : { ...schema, security: [] }, url }),
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Vouch verification API',
        version: '1.0.0',
        description: API_DESCRIPTION,
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'sk_test_... or sk_live_...' },
          session: { type: 'apiKey', in: 'cookie', name: 'vouch_session', description: 'The web app\'s session cookie (portal API only)' },
        },
      },
      tags: [
        { name: 'Identity lookups', description: 'Synchronous lookups; no state is held for the caller' },
        { name: 'Portal', description: 'The web app\'s own API under /api: session cookie, never API secrets; errors in style A' },
        { name: 'Console', description: 'The operator console\'s API under /api/console: operators\' sessions only; errors in style A' },
        { name: 'Field', description: 'The field app\'s API under /api/field: active field agents\' sessions only; errors in style A' },
      ],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  app.get('/health', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/ready', { schema: { hide: true } }, async (_request, reply) => {
    try {
      await sql`select 1`.execute(database.db);
      return { status: 'ok', database: database.kind };
    } catch {
      return reply.status(503).send({ status: 'error', code: 'SERVICE_UNAVAILABLE', message: 'Database unreachable' });
    }
  });

  const live = options.liveRegistry ?? (await startRouter(app, options));
  const lookups = new IdentityLookups(database.db, { test: new SandboxRegistry(), live });
  const faceMatcher = options.faceMatcher ?? new FaceMatcher();
  // One count of face matches in progress for the biometrics endpoint and sessions' matches alike.
  const faceMatchCapacity = options.faceMatchCapacity ?? new FaceMatchCapacity(config.faceMatchCaps);
  // Screening against sanctions, PEP and watchlists (src/screening; docs/screening.md).
  const screening = await startScreening(database.db, app.log);
  app.addHook('onClose', async () => screening.close());
  app.decorate('screeningLists', screening.lists);
  await app.register(identityRoutes, { db: database.db, lookups, screen: lookupScreener(database.db, screening.service) });
  await app.register(biometricsRoutes, {
    db: database.db,
    lookups,
    allowPrivateUrls: config.allowPrivateUrls,
    faceMatchCaps: config.faceMatchCaps,
    capacity: faceMatchCapacity,
    matcher: faceMatcher,
    faceMatchGateway: live instanceof UpstreamRouter ? live : undefined,
  });

  // Field verifications: address and business records, the agents who visit, and their photos.
  const fileStore = openFileStore(config, database.protection);
  const urls = fileUrls(await loadSigningKey(database.db), config.publicUrl);
  await app.register(addressRoutes, { db: database.db, urls });
  await app.register(businessRoutes, { db: database.db, urls, registry: (mode) => lookups.registry(mode), screening: screening.service });
  const fieldSources = [addressTaskSource(urls), businessTaskSource(urls)];
  await app.register(agentRoutes, { db: database.db, store: fileStore, sources: fieldSources });
  await app.register(fileRoutes, { db: database.db, store: fileStore, urls });

  // Respondent-completed verifications: guarantors and employers answer on pages under /respond.
  const respondents = respondentsFor(database.db, config, app.log);
  app.addHook('onClose', () => respondents.close());
  const guarantors = startGuarantors({ db: database.db, respondents, lookups, fileUrls: urls, log: app.log });
  app.addHook('onClose', async () => guarantors.stop());
  await app.register(guarantorRoutes, { db: database.db, respondents, service: guarantors.service });
  await app.register(employmentRoutes, { db: database.db, respondents });
  await app.register(respondentPages, { respondents, prefix: '/respond' });

  await app.register(screeningRoutes, { db: database.db, service: screening.service });

  // Verification sessions: the customer's API, and the end user's (the hosted page and the web SDK).
  const registry = (mode: 'test' | 'live') => lookups.registry(mode);
  await app.register(sessionRoutes, { db: database.db, publicUrl: config.publicUrl, registry });
  const sessionFlow = new SessionFlow({
    db: database.db,
    registry,
    matcher: faceMatcher,
    faceMatchCapacity,
    faceMatchGateway: live instanceof UpstreamRouter ? live : undefined,
    engine: options.livenessEngine ?? livenessEngineFor(database.db),
    store: fileStore,
    screening: screening.service,
    publicUrl: config.publicUrl,
    allowPrivateUrls: config.allowPrivateUrls,
  });
  await app.register(endUserRoutes, {
    flow: sessionFlow,
    perAddress: config.rateLimits.perAddress,
    frameUploads: options.frameUploads ?? new FrameUploadPlaces(config.frameUploads),
  });

  // The end user's side of verification sessions: the hosted flow's page and the web SDK.
  await app.register(hostedFlowRoutes, { db: database.db, store: fileStore, imageOrigins: config.s3 ? [new URL(config.s3.endpoint).origin] : [] });
  // Verification links: a public page per link whose button starts a session (src/sessions/links).
  await app.register(linkPages, { prefix: '/l', db: database.db, publicUrl: config.publicUrl, perAddress: config.rateLimits.perAddress });

  // The customer portal's JSON API (the web app under / calls it with a session cookie).
  app.addHook('onRequest', checkOrigin(config));
  await app.register(portalApi, { prefix: '/api', db: database.db, config, urls, lookups, respondents, guarantors: guarantors.service, store: fileStore, fieldSources });
}
