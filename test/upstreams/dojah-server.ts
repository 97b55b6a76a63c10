import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';

/**
 * A local stand-in for https://api.dojah.io that answers as Dojah's documentation shows: the
 * documented bodies in test/fixtures/upstreams/dojah (sources in its README.md), the `AppId` and
 * `Authorization` headers checked, 404 with `{"error": …}` for an unknown identifier. `override`
 * lets a test replace the next answers (a 500, garbage, a body with a field missing, no answer).
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
  /** Every request received: path, query and the two credential headers. */
  requests: { path: string; query: Record<string, string>; appId?: string; authorization?: string }[];
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

export async function startDojahServer(credentials = { appId: '62f5f4a92f94ab003408ba4c', secretKey: 'test_sk_vouchDojahFixture01' }): Promise<DojahServer> {
  const sockets = new Set<Socket>();
  const state: DojahServer = {
    url: '',
    ...credentials,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://dojah.local');
    const query = Object.fromEntries(url.searchParams);
    const appId = req.headers.appid as string | undefined;
    const authorization = req.headers.authorization;
    state.requests.push({ path: url.pathname, query, appId, authorization });
    if (state.override === 'hang') return;
    let answer: Answer;
    if (req.method !== 'GET') answer = json(405, { error: 'Method not allowed' });
    else if (appId !== state.appId || authorization !== state.secretKey) answer = json(401, { error: 'Unauthorized Request' });
    else answer = documentedAnswer(url.pathname, query);
    if (state.override) answer = state.override(answer);
    res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(answer.body);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
