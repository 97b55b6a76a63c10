import autocannon from 'autocannon';
import { cpuSeconds, machineBusySeconds } from './cpu.js';

export interface LoadSettings {
  connections: number;
  /** Measured seconds. */
  duration: number;
  /** Seconds of load before the measured run, discarded. */
  warmup: number;
  /**
   * Requests per second over all connections; absent, every connection sends its next request as
   * soon as the last one is answered (the server's saturation).
   */
  rate?: number;
}

export interface LoadRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadSummary {
  requests: number;
  reqPerSec: number;
  /** Milliseconds, 1 ms resolution. */
  latencyMean: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Count per HTTP status of the measured run. */
  statusCodes: Record<string, number>;
  /** Cores busy during the measured run (Linux only): where the machine's two cores went. */
  cpu?: {
    server: number;
    loadGenerator: number;
    /** Every process: the server, the load generator, PostgreSQL, and whatever else runs. */
    machine: number;
    /** Server CPU time per completed request, in microseconds. */
    serverUsPerRequest: number;
  };
}

interface CpuSnapshot {
  at: number;
  server: number | undefined;
  loadGenerator: number;
  machine: number | undefined;
}

function snapshot(serverPid: number | undefined): CpuSnapshot {
  const own = process.cpuUsage();
  return {
    at: performance.now(),
    server: serverPid === undefined ? undefined : cpuSeconds(serverPid),
    loadGenerator: (own.user + own.system) / 1e6,
    machine: machineBusySeconds(),
  };
}

function cores(before: CpuSnapshot, after: CpuSnapshot, requests: number): LoadSummary['cpu'] {
  if (before.server === undefined || after.server === undefined || before.machine === undefined || after.machine === undefined) return undefined;
  const seconds = (after.at - before.at) / 1000;
  const per = (from: number, to: number) => Number(((to - from) / seconds).toFixed(2));
  return {
    server: per(before.server, after.server),
    loadGenerator: per(before.loadGenerator, after.loadGenerator),
    machine: per(before.machine, after.machine),
    serverUsPerRequest: Math.round(((after.server - before.server) * 1e6) / Math.max(requests, 1)),
  };
}

/**
 * Drives one endpoint with autocannon from this process (pipelining 1): a warm-up whose results
 * are discarded, then the measured run. With `serverPid`, also reports where the CPU went.
 */
export async function load(request: LoadRequest, settings: LoadSettings, serverPid?: number): Promise<LoadSummary> {
  // autocannon spreads these over its defaults, so an explicit `undefined` would erase one.
  const options: autocannon.Options = {
    url: request.url,
    method: request.method ?? 'GET',
    ...(request.headers ? { headers: request.headers } : {}),
    ...(request.body !== undefined ? { body: request.body } : {}),
    connections: settings.connections,
    pipelining: 1,
    ...(settings.rate ? { overallRate: settings.rate } : {}),
  };
  // A separate warm-up call (not autocannon's `warmup`) so the CPU counters cover the measured run only.
  if (settings.warmup > 0) await autocannon({ ...options, duration: settings.warmup });
  const before = snapshot(serverPid);
  const result = await autocannon({ ...options, duration: settings.duration });
  const after = snapshot(serverPid);
  return {
    requests: result.requests.total,
    reqPerSec: result.requests.mean,
    latencyMean: result.latency.mean,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([status, { count }]) => [status, count])),
    cpu: cores(before, after, result.requests.total),
  };
}

/** Statuses other than 2xx and socket failures, as one phrase; empty when every response was 2xx. */
export function failures(summary: LoadSummary): string {
  const parts = Object.entries(summary.statusCodes)
    .filter(([status]) => !status.startsWith('2'))
    .map(([status, count]) => `${count}× ${status}`);
  if (summary.errors > 0) parts.push(`${summary.errors} errors`);
  if (summary.timeouts > 0) parts.push(`${summary.timeouts} timeouts`);
  return parts.join(', ');
}
