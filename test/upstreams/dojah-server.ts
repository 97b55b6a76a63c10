import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';

/**
 * A local stand-in for https://api.dojah.io that answers as Dojah's documentation shows: the
 * documented bodies in test/fixtures/upstreams/dojah (sources in its README.md), the `AppId` and
 * `Authorization` headers checked, 404 with `{"error": …}` for an unknown identifier. `override`
 * lets a test replace the next answers (a 500, garbage, a body with a field missing, no answer).
 * The selfie endpoints (POST `/api/v1/kyc/{bvn,nin}/verify`) know the numbers in `faces`: the
 * documented match body for a selfie listed there, the documented non-match for any other.
 */

const FIXTURES = new URL('../fixtures/upstreams/dojah/', import.meta.url);

export function dojahFixture(name: string): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as Record<string, unknown>;
}

interface Route {
  /** The query parameters Dojah requires, each with the value → fixture of the documented sample. */
  param: string;
  fixtures: Record<string, string>;
  /** Further required parameters and the values Dojah accepts. */
  also?: Record<string, readonly string[]>;
  notFound: Record<string, unknown>;
}

const RESULT_NOT_FOUND = { error: 'Result Not Found' };

const ROUTES: Record<string, Route> = {
  '/api/v1/kyc/bvn/advance': { param: 'bvn', fixtures: { '22222222222': 'bvn-advance' }, notFound: RESULT_NOT_FOUND },
  '/api/v1/kyc/nin': { param: 'nin', fixtures: { '55648152772': 'nin' }, notFound: RESULT_NOT_FOUND },
  '/api/v1/kyc/phone_number': {
    param: 'phone_number',
    fixtures: { '08034628633': 'phone-number' },
    notFound: dojahFixture('phone-number-not-found'),
  },
  '/api/v1/kyc/vnin': { param: 'vnin', fixtures: { AB012345678910YZ: 'vnin' }, notFound: dojahFixture('vnin-not-found') },
  '/api/v1/kyc/dl': { param: 'license_number', fixtures: { FKJ494A2133: 'drivers-license' }, notFound: RESULT_NOT_FOUND },
  '/api/v1/kyc/vin': { param: 'vin', fixtures: { '90F5B1C5BD295355586': 'vin' }, notFound: RESULT_NOT_FOUND },
  '/api/v1/kyc/cac/basic': {
    param: 'rc_number',
    fixtures: { '1234567': 'cac-basic' },
    also: { company_type: ['BUSINESS_NAME', 'COMPANY', 'INCORPORATED_TRUSTEES', 'LIMITED_PARTNERSHIP', 'LIMITED_LIABILITY_PARTNERSHIP'] },
    notFound: RESULT_NOT_FOUND,
  },
  '/api/v1/kyc/tin': { param: 'tin', fixtures: { '21148119-0001': 'tin' }, notFound: RESULT_NOT_FOUND },
};

export interface Answer {
  status: number;
  body: string;
}

export interface DojahServer {
  url: string;
  appId: string;
  secretKey: string;
  /** Every request received: path, query, the two credential headers, and a POST's content type and JSON body. */
  requests: { path: string; query: Record<string, string>; appId?: string; authorization?: string; contentType?: string; body?: Record<string, unknown> }[];
  /** The numbers the selfie endpoints know, each with the selfies (as sent, base64) of its holder. */
  faces: Map<string, Set<string>>;
  /** Replaces Dojah's answer while set: an Answer, a function of the documented one, or 'hang'. */
  override?: 'hang' | ((documented: Answer) => Answer);
  close(): Promise<void>;
}

const json = (status: number, body: unknown): Answer => ({ status, body: JSON.stringify(body) });

function documentedAnswer(path: string, query: Record<string, string>): Answer {
  const route = ROUTES[path];
  if (!route) return { status: 404, body: '<html><body>Cannot GET</body></html>' };
  const value = query[route.param];
  if (!value) return json(400, { error: `${route.param} is required` });
  for (const [name, accepted] of Object.entries(route.also ?? {})) {
    if (!accepted.includes(query[name] ?? '')) return json(400, { error: `${name} is invalid` });
  }
  const fixture = route.fixtures[value];
  return fixture ? json(200, dojahFixture(fixture)) : json(404, route.notFound);
}

/** The selfie endpoints: the number's parameter and the documented match body. */
const FACE_ROUTES: Record<string, { param: string; fixture: string }> = {
  '/api/v1/kyc/bvn/verify': { param: 'bvn', fixture: 'bvn-selfie' },
  '/api/v1/kyc/nin/verify': { param: 'nin', fixture: 'nin-selfie' },
};

function faceAnswer(path: string, body: Record<string, unknown> | undefined, faces: Map<string, Set<string>>): Answer {
  const route = FACE_ROUTES[path];
  if (!route) return { status: 404, body: '<html><body>Cannot POST</body></html>' };
  const key = body?.[route.param];
  const selfie = body?.selfie_image;
  if (typeof key !== 'string' || key === '') return json(400, { error: `${route.param} is required` });
  // The pages ask for the bare base64 of a JPEG ("the buffer starting with /9"), no data: prefix.
  if (typeof selfie !== 'string' || !selfie.startsWith('/9')) return json(400, { error: 'selfie_image must be a base64 JPEG' });
  const holder = faces.get(key);
  if (!holder) return json(404, RESULT_NOT_FOUND);
  const documented = dojahFixture(route.fixture);
  const entity = documented.entity as Record<string, unknown>;
  entity[route.param] = key;
  if (!holder.has(selfie)) entity.selfie_verification = (dojahFixture('vnin-selfie-no-match').entity as Record<string, unknown>).selfie_verification;
  return json(200, documented);
}

export async function startDojahServer(credentials = { appId: '62f5f4a92f94ab003408ba4c', secretKey: 'test_sk_vouchDojahFixture01' }): Promise<DojahServer> {
  const sockets = new Set<Socket>();
  const state: DojahServer = {
    url: '',
    ...credentials,
    requests: [],
    faces: new Map(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://dojah.local');
      const query = Object.fromEntries(url.searchParams);
      const appId = req.headers.appid as string | undefined;
      const authorization = req.headers.authorization;
      const contentType = req.headers['content-type'];
      let body: Record<string, unknown> | undefined;
      try {
        body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : undefined;
      } catch {
        body = undefined;
      }
      state.requests.push({ path: url.pathname, query, appId, authorization, contentType, body });
      if (state.override === 'hang') return;
      let answer: Answer;
      if (appId !== state.appId || authorization !== state.secretKey) answer = json(401, { error: 'Unauthorized Request' });
      else if (req.method === 'GET') answer = documentedAnswer(url.pathname, query);
      else if (req.method === 'POST' && contentType?.startsWith('application/json')) answer = faceAnswer(url.pathname, body, state.faces);
      else answer = json(405, { error: 'Method not allowed' });
      if (state.override) answer = state.override(answer);
      res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8' });
      res.end(answer.body);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
