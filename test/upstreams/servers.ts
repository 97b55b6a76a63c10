import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { importRegistry } from '../../src/identities/registry/import.js';
import { loadTestIdentities, type TestIdentities } from '../../src/identities/registry/test-identities.js';
import { buildTestContext, type TestContext } from '../helpers/app.js';

/** Test servers for the router: a real second Vouch as the upstream, and the broken providers it must survive. */

export interface UpstreamVouch {
  context: TestContext;
  url: string;
  liveSecret: string;
  identities: TestIdentities;
}

/** A second Vouch on a real port, its registry holding the test identities, with a funded risk-NONE FULL account. */
export async function startUpstreamVouch(): Promise<UpstreamVouch> {
  const context = await buildTestContext();
  const identities = await loadTestIdentities();
  const lines = Object.entries(identities).map(([type, record]) => JSON.stringify({ type, record }));
  await importRegistry(context.database.db, (async function* () {
    yield `${lines.join('\n')}\n`;
  })());
  const org = await context.org({ fund: 100_000_000 });
  const url = await listen(context.app);
  return { context, url, liveSecret: org.liveSecret, identities };
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

export interface TestServer {
  url: string;
  requests: () => number;
  close(): Promise<void>;
}

/** A provider that answers every request with `handler`; `hang` never answers. */
export async function startServer(handler: ((req: http.IncomingMessage, res: http.ServerResponse) => void) | 'hang'): Promise<TestServer> {
  let count = 0;
  const server = http.createServer((req, res) => {
    count += 1;
    if (handler !== 'hang') handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => count,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A URL on which nothing listens: connections are refused. */
export async function refusedUrl(): Promise<string> {
  const server = await startServer(() => undefined);
  await server.close();
  return server.url;
}

/** Forwards to `target` while healthy, answers 500 while broken: a provider that goes down and comes back. */
export async function startFlaky(target: string): Promise<TestServer & { broken: boolean }> {
  const state = { broken: true };
  const server = await startServer((req, res) => {
    if (state.broken) {
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"upstream down"}');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      void fetch(`${target}${req.url}`, { method: req.method, headers: req.headers as Record<string, string>, body: req.method === 'GET' ? undefined : body }).then(async (answer) => {
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
      });
    });
  });
  return {
    ...server,
    get broken() {
      return state.broken;
    },
    set broken(value: boolean) {
      state.broken = value;
    },
  };
}

/** A provider that can be stopped and started again on the same port: while stopped, connections are refused. */
export interface Switchable {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** Forwards every request to `target` (a second Vouch) while started, as that provider going down and coming back. */
export async function startSwitchable(target: string): Promise<Switchable> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      void fetch(`${target}${req.url}`, { method: req.method, headers: req.headers as Record<string, string>, body: req.method === 'GET' ? undefined : body }).then(async (answer) => {
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
    start: () => new Promise((resolve) => server.listen(port, '127.0.0.1', resolve)),
  };
}
