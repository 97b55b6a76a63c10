/**
 * A bounded fuzz run over every operation of the OpenAPI document: malformed variants (wrong
 * types, control characters, huge strings, missing or empty bodies, wrong content types, cut
 * multipart, deep JSON, encoded and dot-segment paths) sent with app.inject. A failure is any 5xx,
 * and under /v1 and /api an HTML answer (the web app's page). Issue 19: it stays at
 * zero; test/platform/fuzz.test.ts runs the quick set on both databases.
 *
 *   npx tsx scripts/fuzz.ts           the full set on an in-memory embedded database
 *   npx tsx scripts/fuzz.ts --quick   the test's set
 */
import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance, InjectOptions } from 'fastify';

export interface FuzzCredentials {
  /** An API secret (sk_test_...) of an organization at risk level LOW or above. */
  secret: string;
  /** A field agent's credential (ak_...). */
  agentCredential: string;
  /** A signed-in portal session's cookie, the organization's owner, and that organization's id. */
  portalCookie: string;
  orgId: string;
  /** An operator's signed-in session cookie, for /api/console. */
  operatorCookie?: string;
  /** The app's public origin (the portal API's Origin check). */
  origin: string;
}

export interface FuzzFailure {
  method: string;
  url: string;
  variant: string;
  status: number;
  contentType: string;
  body: string;
}

export interface FuzzReport {
  requests: number;
  failures: FuzzFailure[];
}

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
}

interface Operation {
  method: string;
  path: string;
  params: string[];
  query: string[];
  body?: Schema;
  multipart: boolean;
}

type Variant = { name: string } & Pick<InjectOptions, 'headers' | 'payload'> & { url?: string };

const NUL = 'A\u0000B';
const DEEP = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;

/** Values a field gets in place of a sensible one; the quick set is the first few. */
const FIELD_VALUES: [string, unknown][] = [
  ['NUL', NUL],
  ['number', 5],
  ['null', null],
  ['huge string', 'x'.repeat(200_000)],
  ['bell', 'a\u0007b'],
  ['boolean', true],
  ['object', { a: 1 }],
  ['array', ['a', 1]],
  ['negative', -1],
  ['huge number', 1e308],
  ['long digits', '9'.repeat(400)],
  ['bad date', '2020-02-31'],
  ['lone surrogate', '\ud800'],
  ['quote', "'; select 1; --"],
  ['dots', '../../etc/passwd'],
];

const PARAM_VALUES = ['%00', 'x'.repeat(5_000), '%E0%A4%A', '..%2F..%2Fapi', '-1', '99999999999999999999', '%20', 'A%07B'];
const QUERY_VALUES = ['%00', 'x'.repeat(5_000), '-1', '99999999999999999999', 'true', '%E0%A4%A', 'a&limit=-1'];

function operationsOf(app: FastifyInstance): Operation[] {
  const doc = app.swagger() as unknown as { paths: Record<string, Record<string, { parameters?: { in: string; name: string }[]; requestBody?: { content: Record<string, { schema: Schema }> } }>> };
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const content = op.requestBody?.content ?? {};
      operations.push({
        method: method.toUpperCase(),
        path,
        params: (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
        query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
        body: content['application/json']?.schema,
        multipart: 'multipart/form-data' in content,
      });
    }
  }
  return operations;
}

/** A plausible value of a schema: required fields filled, the first allowed value of an enum. */
function sample(schema: Schema | undefined, depth = 0): unknown {
  if (!schema || depth > 4) return 'x';
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf?.length) return sample(schema.anyOf[0], depth + 1);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const value: Record<string, unknown> = {};
      for (const key of schema.required ?? []) value[key] = sample(schema.properties?.[key], depth + 1);
      return value;
    }
    case 'array':
      return [sample(schema.items, depth + 1)];
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    default:
      return 'test';
  }
}

function multipart(boundary: string, parts: string[]): string {
  return `${parts.map((part) => `--${boundary}\r\n${part}\r\n`).join('')}--${boundary}--\r\n`;
}

function variantsOf(op: Operation, quick: boolean): Variant[] {
  const variants: Variant[] = [{ name: 'no body' }];
  const writes = op.method !== 'GET' && op.method !== 'HEAD';
  if (writes) {
    const json = { 'content-type': 'application/json' };
    variants.push(
      { name: 'empty JSON body', headers: json, payload: '' },
      { name: 'invalid JSON', headers: json, payload: '{"a":' },
      { name: 'JSON null', headers: json, payload: 'null' },
      { name: 'JSON array', headers: json, payload: '[]' },
      { name: 'JSON string', headers: json, payload: '"x"' },
      { name: 'deep JSON', headers: json, payload: DEEP },
      { name: 'text/plain', headers: { 'content-type': 'text/plain' }, payload: 'x' },
      { name: 'multipart without boundary', headers: { 'content-type': 'multipart/form-data' }, payload: 'x' },
      { name: 'multipart cut short', headers: { 'content-type': 'multipart/form-data; boundary=B' }, payload: '--B\r\nContent-Disposition: form-data; name="photo"; filename="a.jpg"\r\n\r\nabc' },
      { name: 'multipart NUL field', headers: { 'content-type': 'multipart/form-data; boundary=B' }, payload: multipart('B', [`Content-Disposition: form-data; name="idType"\r\n\r\n${NUL}`]) },
    );
    if (!quick) variants.push({ name: 'form-urlencoded', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=%00' });
  }
  if (op.body) {
    const base = sample(op.body) as Record<string, unknown>;
    const values = quick ? FIELD_VALUES.slice(0, 4) : FIELD_VALUES;
    const fields = Object.entries(op.body.properties ?? {}).slice(0, quick ? 6 : 30);
    for (const [field, schema] of fields) {
      for (const [name, value] of values) variants.push({ name: `${field}: ${name}`, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ ...base, [field]: value }) });
      const nested = schema.properties ? Object.keys(schema.properties).slice(0, quick ? 2 : 10) : [];
      for (const inner of nested) {
        const parent = (typeof base[field] === 'object' && base[field] !== null ? base[field] : {}) as Record<string, unknown>;
        variants.push({ name: `${field}.${inner}: NUL`, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ ...base, [field]: { ...parent, [inner]: NUL } }) });
      }
    }
  }
  return variants;
}

function fill(path: string, values: Record<string, string>, override?: [string, string]): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => (override && override[0] === name ? override[1] : (values[name] ?? '1')));
}

/** Path forms of one URL: dot segments, doubled and trailing slashes, an encoded letter. */
function pathForms(url: string, quick: boolean): [string, string][] {
  const forms: [string, string][] = [
    ['dot segment', `/.${url}`],
    ['trailing slash', url.replace(/(\?|$)/, '/$1')],
  ];
  if (!quick) forms.push(['encoded dot', `/%2e${url}`], ['doubled slash', `/${url}`], ['parent segment', `/x/..${url}`], ['encoded letter', url.replace(/^\/(v1|api)/, (_, p: string) => `/%${p.charCodeAt(0).toString(16)}${p.slice(1)}`)]);
  return forms;
}

function credentialHeaders(path: string, credentials: FuzzCredentials): Record<string, string> {
  if (path.startsWith('/v1/agent/')) return { authorization: `Bearer ${credentials.agentCredential}` };
  if (path.startsWith('/api/console/')) return { origin: credentials.origin, ...(credentials.operatorCookie ? { cookie: credentials.operatorCookie } : {}) };
  if (path.startsWith('/api/')) return { origin: credentials.origin, cookie: credentials.portalCookie };
  return { authorization: `Bearer ${credentials.secret}` };
}

/** Sends the run's requests one at a time and collects the failures. */
export async function runFuzz(app: FastifyInstance, credentials: FuzzCredentials, { quick = false } = {}): Promise<FuzzReport> {
  const report: FuzzReport = { requests: 0, failures: [] };
  const values: Record<string, string> = { orgId: credentials.orgId, id: '1', ref: '22345678901', vNin: 'YV111111111111FY', kind: 'address', mode: 'test', type: 'bvn_basic' };
  const send = async (op: Operation, url: string, variant: Variant) => {
    const response = await app.inject({
      method: op.method as InjectOptions['method'],
      url,
      headers: { ...credentialHeaders(op.path, credentials), ...variant.headers },
      ...(variant.payload !== undefined ? { payload: variant.payload } : {}),
      // Each request from its own address: the per-address limits must not turn the run into 429s.
      remoteAddress: `10.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${1 + (randomBytes(1)[0]! % 250)}`,
    });
    report.requests++;
    const contentType = String(response.headers['content-type'] ?? '');
    const api = /^\/(v1|api)(\/|$)/.test(op.path);
    // The web app's page where an API answer belongs (CSV exports and photos are answers too).
    const html = api && (contentType.startsWith('text/html') || /^\s*<!doctype/i.test(response.body));
    if (response.statusCode >= 500 || html) {
      report.failures.push({ method: op.method, url: url.length > 200 ? `${url.slice(0, 200)}…` : url, variant: variant.name, status: response.statusCode, contentType, body: response.body.slice(0, 300) });
    }
  };
  for (const op of operationsOf(app)) {
    if (op.method === 'HEAD') continue;
    const url = fill(op.path, values);
    for (const variant of variantsOf(op, quick)) await send(op, variant.url ?? url, variant);
    for (const [name, form] of pathForms(url, quick)) await send(op, form, { name });
    for (const param of op.params) {
      for (const value of quick ? PARAM_VALUES.slice(0, 3) : PARAM_VALUES) await send(op, fill(op.path, values, [param, value]), { name: `${param} = ${value.slice(0, 20)}` });
    }
    for (const name of op.query.slice(0, quick ? 3 : 20)) {
      for (const value of quick ? QUERY_VALUES.slice(0, 2) : QUERY_VALUES) await send(op, `${url}?${name}=${value}`, { name: `?${name}=${value.slice(0, 20)}` });
    }
  }
  return report;
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const [{ buildApp }, { loadConfig }, { openDatabase }, { migrate }, { AccountsService }, { createAgent }, { insertPerson }, { createSession, SESSION_COOKIE }] = await Promise.all([
    import('../src/app.js'),
    import('../src/config.js'),
    import('../src/platform/db/database.js'),
    import('../src/platform/db/migrate.js'),
    import('../src/accounts/service.js'),
    import('../src/agents/service.js'),
    import('../src/portal/people.js'),
    import('../src/portal/sessions.js'),
  ]);
  const database = await openDatabase({ dataDir: 'memory://' });
  await migrate(database.db);
  const origin = 'http://127.0.0.1:8080';
  const config = { ...loadConfig({ LOG_LEVEL: 'silent', VOUCH_WORKER: 'off' }), publicUrl: origin, encryptionKey: randomBytes(32) };
  const app = await buildApp({ config, database });
  await app.ready();
  try {
    const org = await new AccountsService(database.db).create({ name: 'Fuzz', enabled: true, riskLevel: 'LOW', payloadType: 'FULL', fund: 100_000 });
    const agent = await createAgent(database.db, { name: 'Fuzz Agent', email: 'fuzz@agents.example', phone: '08031230000', states: ['Lagos'] });
    const personId = await insertPerson(database.db, { email: 'fuzz@example.com', name: 'Fuzz', password: 'correct horse battery', verified: true });
    await database.db.insertInto('memberships').values({ org_id: org.id, person_id: personId, role: 'owner' }).execute();
    const { token } = await createSession(database.db, { personId });
    const started = Date.now();
    const report = await runFuzz(app, { secret: org.testSecret, agentCredential: agent.credential, portalCookie: `${SESSION_COOKIE}=${token}`, orgId: org.id, origin }, { quick });
    for (const failure of report.failures) console.log(`${failure.status} ${failure.method} ${failure.url} [${failure.variant}] ${failure.contentType} ${failure.body}`);
    console.log(`${report.requests} requests in ${((Date.now() - started) / 1000).toFixed(1)} s, ${report.failures.length} failures`);
    process.exitCode = report.failures.length > 0 ? 1 : 0;
  } finally {
    await app.close();
    await database.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
