/**
 * The customer's endpoint in the webhook benchmark, in a process of its own so it does not share
 * the worker's event loop. Verifies every Standard Webhooks signature, counts duplicates, and
 * measures completion-to-delivery latency (receipt time minus the body's `timestamp`, which
 * enqueueEvent sets at completion). bench/sections/webhooks.ts starts it as
 * `node --import tsx bench/webhook-receiver.ts` with PORT and HOST.
 *
 *   POST /hook      a delivery: 204
 *   PUT  /_secret   the endpoint secret to verify with (text body)
 *   POST /_reset    forget everything received
 *   GET  /_stats    {received, unique, duplicates, badSignatures, firstAt, lastAt, latency}
 *
 * ANSWER_DELAY_MS (default 0) makes it answer each delivery that long after receiving it, so a
 * worker always has attempts in flight (bench/sections/webhook-failover.ts).
 */
import http from 'node:http';
import { Webhook } from 'standardwebhooks';
import { quantile } from './lib/report.js';

const answerDelayMs = Number(process.env.ANSWER_DELAY_MS ?? 0);
let verifier: Webhook | undefined;
let seen = new Set<string>();
let latencies: number[] = [];
let stats = { received: 0, duplicates: 0, badSignatures: 0, firstAt: 0, lastAt: 0 };

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

const server = http.createServer(async (request, response) => {
  const body = await readBody(request);
  const now = Date.now();
  if (request.url === '/hook' && request.method === 'POST') {
    stats.received++;
    stats.firstAt ||= now;
    stats.lastAt = now;
    const id = String(request.headers['webhook-id']);
    if (seen.has(id)) stats.duplicates++;
    seen.add(id);
    try {
      const payload = verifier!.verify(body, request.headers as Record<string, string>) as { timestamp: string };
      latencies.push(now - Date.parse(payload.timestamp));
    } catch {
      stats.badSignatures++;
    }
    if (answerDelayMs > 0) setTimeout(() => response.writeHead(204).end(), answerDelayMs);
    else response.writeHead(204).end();
  } else if (request.url === '/_secret' && request.method === 'PUT') {
    verifier = new Webhook(body.trim());
    response.writeHead(204).end();
  } else if (request.url === '/_reset' && request.method === 'POST') {
    seen = new Set();
    latencies = [];
    stats = { received: 0, duplicates: 0, badSignatures: 0, firstAt: 0, lastAt: 0 };
    response.writeHead(204).end();
  } else if (request.url === '/_stats') {
    const sorted = [...latencies].sort((a, b) => a - b);
    const latency = { p50: quantile(sorted, 0.5), p90: quantile(sorted, 0.9), p99: quantile(sorted, 0.99), max: sorted.at(-1) ?? 0 };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...stats, unique: seen.size, latency }));
  } else if (request.url === '/ready') {
    response.writeHead(200).end('ok');
  } else {
    response.writeHead(404).end();
  }
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT), process.env.HOST ?? '127.0.0.1');
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
