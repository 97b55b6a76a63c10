import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Youverify answering the documented bodies in
 * test/fixtures/upstreams/youverify (see its README.md for where each comes from). It checks what
 * Youverify checks: the `token` header, the path, a JSON body with the id and the consent flag.
 * A NIN request with `validations.selfie.image` is a face match: the NINs in `faces` are known,
 * each with the selfies (as sent) of its holder, which match; any other selfie does not.
 */

const FIXTURES = new URL('../fixtures/upstreams/youverify/', import.meta.url);

export function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as Record<string, unknown>;
}

/** How the server answers the next lookups: the documented bodies, or a failure to provoke. */
export type Mode = 'documented' | 'status-500' | 'garbage' | 'missing-field' | 'hang';

interface Route {
  /** The body field holding the identifier. */
  idField: 'id' | 'tin';
  /** Identifier -> documented found body. */
  found: Record<string, string>;
  /** The documented not-found body for any other identifier. */
  notFound: () => Record<string, unknown>;
}

// Youverify documents not_found bodies for PVC and TIN only; the NIN and vNIN ones follow the
// PVC body's shape with their own type (see the fixtures README).
const notFoundOfType = (type: string) => () => {
  const body = fixture('pvc-not-found');
  (body.data as Record<string, unknown>).type = type;
  return body;
};

const ROUTES: Record<string, Route> = {
  '/v2/api/identity/ng/nin': { idField: 'id', found: { '11111111111': 'nin-found' }, notFound: notFoundOfType('nin') },
  '/v2/api/identity/ng/vnin': { idField: 'id', found: { YV111111111111FY: 'vnin-found' }, notFound: notFoundOfType('vnin') },
  '/v2/api/verifications/ng/tin': { idField: 'tin', found: { '00000000-0000': 'tin-found' }, notFound: () => fixture('tin-not-found') },
};

function selfieOf(fields: Record<string, unknown>): string | undefined {
  const validations = fields.validations as { selfie?: { image?: unknown } } | undefined;
  return typeof validations?.selfie?.image === 'string' ? validations.selfie.image : undefined;
}

export interface YouverifyServer {
  url: string;
  mode: Mode;
  /** The requests received, for assertions on what the adapter sent. */
  requests: Array<{ path: string; headers: http.IncomingHttpHeaders; body: unknown }>;
  /** The NINs the face match knows, each with the selfies of its holder (base64, as sent). */
  faces: Map<string, Set<string>>;
  close(): Promise<void>;
}

export async function startYouverifyServer(token: string): Promise<YouverifyServer> {
  const hanging = new Set<http.ServerResponse>();
  const state: YouverifyServer = { url: '', mode: 'documented', requests: [], faces: new Map(), close: async () => {} };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      state.requests.push({ path, headers: req.headers, body });
      answer(req, res, path, body);
    });
  });

  function send(res: http.ServerResponse, status: number, body: unknown): void {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json' }).end(text);
  }

  function answer(req: http.IncomingMessage, res: http.ServerResponse, path: string, body: unknown): void {
    if (req.headers.token !== token) return send(res, 401, fixture('error-401-legacy'));
    const route = ROUTES[path];
    if (req.method !== 'POST' || !route) return send(res, 404, fixture('error-404'));
    const fields = (body ?? {}) as Record<string, unknown>;
    const id = fields[route.idField];
    const consent = fields.isSubjectConsent === true || fields.isConsent === true;
    if (typeof id !== 'string' || !consent || !String(req.headers['content-type']).startsWith('application/json')) {
      return send(res, 400, { success: false, statusCode: 400, message: 'Validation failed', name: 'ValidationError', data: {} });
    }
    switch (state.mode) {
      case 'hang':
        hanging.add(res);
        return;
      case 'status-500':
        return send(res, 500, { success: false, statusCode: 500, message: 'Internal server error', data: {} });
      case 'garbage':
        return send(res, 200, '<html>502 Bad Gateway</html>');
      case 'missing-field': {
        const name = route.found[id];
        if (!name) return send(res, 200, route.notFound());
        const found = fixture(name);
        const data = found.data as Record<string, unknown>;
        delete data.lastName;
        delete data.name;
        return send(res, 200, found);
      }
      case 'documented': {
        const selfie = selfieOf(fields);
        if (path === '/v2/api/identity/ng/nin' && selfie !== undefined) return send(res, 200, faceMatch(id, selfie));
        const name = route.found[id];
        return send(res, 200, name ? fixture(name) : route.notFound());
      }
    }
  }

  /** The NIN found body with the selfie validation block (fixture README: its field names are not from the documentation). */
  function faceMatch(nin: string, selfie: string): Record<string, unknown> {
    const holder = state.faces.get(nin);
    if (!holder) return notFoundOfType('nin')();
    const body = fixture('nin-found');
    const data = body.data as Record<string, unknown>;
    const validation = fixture('nin-selfie-validation');
    const verification = (validation.selfie as Record<string, Record<string, unknown>>).selfieVerification!;
    if (!holder.has(selfie)) Object.assign(verification, { confidenceLevel: 12.5, match: false });
    Object.assign(data, { idNumber: nin, selfieValidation: true, validations: validation });
    return body;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}
