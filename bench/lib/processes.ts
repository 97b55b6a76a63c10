import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { promisify } from 'node:util';
import { deferCleanup } from './cleanup.js';
import { BenchError } from './errors.js';

const run = promisify(execFile);

export type Env = Record<string, string>;

/** A port nobody listens on now (the server binds it a moment later). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = net.createServer();
  server.listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** Runs a command to completion and returns its standard output; a failure carries its stderr. */
export async function runCommand(command: string, args: string[], options: { cwd: string; env: Env }): Promise<string> {
  try {
    const { stdout } = await run(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const { stderr, message } = err as { stderr?: string; message: string };
    throw new BenchError(`${[command, ...args].join(' ')} failed: ${(stderr || message).trim()}`);
  }
}

/** The last JSON object a command printed on a line of its own. */
export function lastJsonLine<T>(stdout: string): T {
  const line = stdout.trim().split('\n').reverse().find((candidate) => candidate.trim().startsWith('{'));
  if (!line) throw new BenchError(`expected a JSON line in the output, got: ${stdout.slice(-500)}`);
  return JSON.parse(line) as T;
}

export interface ServerSpec {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: Env;
  host?: string;
  /** Answers 200 once the server can take load. */
  readyPath?: string;
  readyTimeoutMs?: number;
}

export interface RunningServer {
  name: string;
  url: string;
  pid: number;
  /** The last few kilobytes the server wrote to stdout and stderr, for an error message. */
  output(): string;
  stop(): Promise<void>;
}

const TAIL = 4_000;

/**
 * Starts a server as a child process on a free port (passed as PORT and HOST) and resolves once
 * its ready path answers 200. The child is stopped by `stop()`, or on Ctrl-C.
 */
export async function startServer(spec: ServerSpec): Promise<RunningServer> {
  const host = spec.host ?? '127.0.0.1';
  const port = await freePort(host);
  const child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: { ...process.env, ...spec.env, PORT: String(port), HOST: host },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-TAIL);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exited = false;
  const exit = once(child, 'exit').then(() => {
    exited = true;
  });

  const stop = deferCleanup(async () => {
    if (exited) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exit;
    clearTimeout(killer);
  });

  const url = `http://${host}:${port}`;
  const readyUrl = `${url}${spec.readyPath ?? '/ready'}`;
  const deadline = Date.now() + (spec.readyTimeoutMs ?? 30_000);
  try {
    for (;;) {
      if (exited) throw new BenchError(`${spec.name} exited before it was ready (code ${child.exitCode}): ${output.trim()}`);
      const status = await fetch(readyUrl).then((response) => response.status, () => 0);
      if (status === 200) break;
      if (Date.now() > deadline) throw new BenchError(`${spec.name} was not ready at ${readyUrl} within the timeout: ${output.trim()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { name: spec.name, url, pid: child.pid!, output: () => output.trim(), stop };
}

/**
 * Rate limits out of the way: a benchmark drives one secret (or one address) far past any
 * sensible production limit on purpose. The limiter still runs and counts every request.
 */
export const NO_RATE_LIMITS: Env = { VOUCH_RATE_LIMIT: '100000000', VOUCH_RATE_LIMIT_PER_ADDRESS: '100000000' };

/**
 * Node's own CPU profiler for a server under load: with `BENCH_CPU_PROF=DIR`, the server writes a
 * `.cpuprofile` into DIR when it stops (open it in Chrome DevTools, or summarise it with
 * `node bench/lib/top-functions.mjs FILE`). Put before the script in the server's arguments.
 */
export function profilerArgs(env: NodeJS.ProcessEnv = process.env): string[] {
  const dir = env.BENCH_CPU_PROF;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}
