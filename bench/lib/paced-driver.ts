/**
 * The open-loop driver behind `paced` (load.ts), run as a process of its own: `paced` forks it
 * (`node --import tsx`, with an IPC channel) and sends it one `PacedJob`.
 *
 * It is a separate process because a latency probe must not share a heap with the bench runner.
 * The runner holds what the sections before have built (a million seeded rows went through it).
 * Its collector then ran incremental marking steps of 2-8 ms about every half second during a paced run.
 * While one ran, no answer was read and nothing was sent. Almost every cluster of slow requests
 * in the lists section's paced runs (for Vouch and the baseline alike) began with one
 * (docs/benchmarks.md, sixteenth session). A fresh process that does only this keeps its collections
 * under a millisecond.
 *
 * Protocol: the parent sends the job; the driver runs the warm-up and says `warm`; the parent
 * reads its CPU counters and says `go`; the driver runs the measured seconds and sends `done` with
 * every latency, then exits.
 */
import http from 'node:http';
import type { LoadRequest } from './load.js';

export interface PacedJob {
  request: LoadRequest;
  rate: number;
  connections: number;
  warmup: number;
  duration: number;
}

export interface PacedRun {
  /** Milliseconds from when each request was due to the end of its answer, in completion order. */
  latencies: number[];
  statusCodes: Record<string, number>;
  errors: number;
}

export type DriverMessage = { type: 'warm' } | ({ type: 'done' } & PacedRun);
export type ParentMessage = ({ type: 'job' } & PacedJob) | { type: 'go' };

/** Sends `seconds × rate` requests, request i due at start + i ÷ rate, and resolves once all are answered. */
function run(job: PacedJob, agent: http.Agent, seconds: number): Promise<PacedRun> {
  const target = new URL(job.request.url);
  const total = Math.round(seconds * job.rate);
  const latencies: number[] = [];
  const statusCodes: Record<string, number> = {};
  let errors = 0;
  let sent = 0;
  return new Promise((resolve) => {
    if (total === 0) return resolve({ latencies, statusCodes, errors });
    const record = (due: number, status: number | 'error') => {
      latencies.push(performance.now() - due);
      if (status === 'error') errors++;
      else statusCodes[status] = (statusCodes[status] ?? 0) + 1;
      if (latencies.length === total) resolve({ latencies, statusCodes, errors });
    };
    const send = (due: number) => {
      const call = http.request(
        { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method: job.request.method ?? 'GET', headers: job.request.headers, agent },
        (response) => {
          response.on('data', () => undefined);
          response.on('end', () => record(due, response.statusCode ?? 0));
        },
      );
      call.on('error', () => record(due, 'error'));
      call.end(job.request.body);
    };
    const start = performance.now();
    const dueAt = (i: number) => start + (i * 1000) / job.rate;
    const tick = () => {
      const now = performance.now();
      while (sent < total && dueAt(sent) <= now) send(dueAt(sent++));
      if (sent < total) setTimeout(tick, Math.max(0, dueAt(sent) - performance.now()));
    };
    tick();
  });
}

function post(message: DriverMessage): void {
  process.send!(message);
}

// The parent gone (Ctrl-C, a failed section), nothing is left to report to: stop sending.
process.once('disconnect', () => process.exit(0));

process.once('message', (job: ParentMessage) => {
  if (job.type !== 'job') throw new Error(`paced-driver: expected a job, got ${job.type}`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.connections });
  void (async () => {
    await run(job, agent, job.warmup);
    const go = new Promise<void>((resolve) => process.once('message', () => resolve()));
    post({ type: 'warm' });
    await go;
    const measured = await run(job, agent, job.duration);
    agent.destroy();
    post({ type: 'done', ...measured });
    process.disconnect();
  })();
});
