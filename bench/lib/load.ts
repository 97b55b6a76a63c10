import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cpuSeconds, machineBusySeconds } from './cpu.js';
import { BenchError } from './errors.js';
import type { DriverMessage, ParentMessage } from './paced-driver.js';
import { quantile, round } from './report.js';

export interface LoadSettings {
  connections: number;
  /** Measured seconds. */
  duration: number;
  /** Seconds of load before the measured run, discarded. */
  warmup: number;
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

/** The load generator is this process, or the driver process of `paced` (`driverPid`). */
function snapshot(serverPid: number | undefined, driverPid?: number): CpuSnapshot {
  const own = process.cpuUsage();
  return {
    at: performance.now(),
    server: serverPid === undefined ? undefined : cpuSeconds(serverPid),
    loadGenerator: driverPid === undefined ? (own.user + own.system) / 1e6 : (cpuSeconds(driverPid) ?? 0),
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

/** A run's cells in a section's table: req/s, p50 ms, p99 ms, requests, non-2xx (with socket failures), server µs CPU/req. */
export function summaryCells(summary: LoadSummary): (string | number)[] {
  return [
    round(summary.reqPerSec, 0),
    summary.p50,
    summary.p99,
    summary.requests,
    summary.non2xx + summary.errors + summary.timeouts,
    summary.cpu?.serverUsPerRequest ?? '-',
  ];
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

/**
 * Open-loop load at a steady rate (the wrk2 way): request i is due at start + i ÷ rate, whatever
 * happened to earlier ones, over keep-alive sockets (at most `connections`; requests queue for a
 * free one). Its latency counts from when it was due, not when it was sent, so a stall delays
 * every request due meanwhile and shows in the percentiles (no coordinated omission).
 * autocannon's `overallRate` cannot do this: it sends each second's quota as one burst.
 * The requests are sent from a process of their own (paced-driver.ts): this one's heap would
 * stall them.
 */
export async function paced(request: LoadRequest, settings: LoadSettings & { rate: number }, serverPid?: number): Promise<LoadSummary> {
  const driver = fork(fileURLToPath(new URL('./paced-driver.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = once(driver, 'exit').then(([code, signal]) => {
    throw new BenchError(`the paced load driver stopped early (${signal ?? `exit code ${code}`})`);
  });
  // Every step waits on the driver's next message or its exit, whichever comes first.
  const next = <T extends DriverMessage['type']>(type: T) =>
    Promise.race([once(driver, 'message').then(([message]) => message as Extract<DriverMessage, { type: T }>), exited]).then((message) => {
      if (message.type !== type) throw new BenchError(`the paced load driver said ${message.type}, not ${type}`);
      return message;
    });
  const send = (message: ParentMessage) => driver.send(message);
  try {
    send({ type: 'job', request, rate: settings.rate, connections: settings.connections, warmup: settings.warmup, duration: settings.duration });
    await next('warm');
    const before = snapshot(serverPid, driver.pid);
    send({ type: 'go' });
    const { latencies, statusCodes, errors } = await next('done');
    const after = snapshot(serverPid, driver.pid);
    latencies.sort((a, b) => a - b);
    const at = (fraction: number) => Math.round(quantile(latencies, fraction) * 10) / 10;
    const non2xx = Object.entries(statusCodes).filter(([status]) => !status.startsWith('2')).reduce((sum, [, count]) => sum + count, 0);
    return {
      requests: latencies.length,
      reqPerSec: latencies.length / ((after.at - before.at) / 1000),
      latencyMean: latencies.reduce((sum, value) => sum + value, 0) / latencies.length,
      p50: at(0.5),
      p99: at(0.99),
      non2xx,
      errors,
      timeouts: 0,
      statusCodes,
      cpu: cores(before, after, latencies.length),
    };
  } finally {
    exited.catch(() => undefined);
    if (driver.exitCode === null && driver.signalCode === null) driver.kill();
  }
}
