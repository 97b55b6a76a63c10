import { AsyncLocalStorage } from 'node:async_hooks';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Database } from '../platform/db/database.js';

/**
 * The CLI beside a running server on the embedded database (docs/cli.md). PGlite is one process's:
 * while `vouch serve` holds the data folder, a command cannot open it. The server listens on a
 * Unix socket in the data folder (`vouch.sock`, mode 0600: only the machine user that runs Vouch
 * can connect, as only they can read the folder), and a command that finds the folder in use
 * sends its arguments there; the server runs it on its own open database and sends back what it
 * printed and its exit code. On PostgreSQL nothing changes: every command opens its own
 * connection beside the server.
 */

/** The socket's file name in the data folder. */
export const SOCKET_NAME = 'vouch.sock';

/** What a command run inside the server writes, and the database it uses. */
interface HostedRun {
  database: Database;
  stdout: string[];
  stderr: string[];
  /** Set by a command that ends without an error but not done (setExitCode). */
  exitCode?: number;
}

const hosted = new AsyncLocalStorage<HostedRun>();

/** A command's own exit code outside the server (one command a process). */
let localExitCode: number | undefined;

/** Ends the command with `code` once it returns (a sync that printed its failed sources, say). */
export function setExitCode(code: number): void {
  const run = hosted.getStore();
  if (run) run.exitCode = code;
  else localExitCode = code;
}

/** The exit code a command asked for with setExitCode, if any, taken (and forgotten). */
export function takeExitCode(): number | undefined {
  const run = hosted.getStore();
  const code = run ? run.exitCode : localExitCode;
  if (run) run.exitCode = undefined;
  else localExitCode = undefined;
  return code;
}

/** The server's run of a command, when this code runs inside one. */
export function hostedRun(): HostedRun | undefined {
  return hosted.getStore();
}

/** Standard output, or the hosted run's when inside one. */
export function writeOut(text: string): void {
  const run = hosted.getStore();
  if (run) run.stdout.push(text);
  else process.stdout.write(text);
}

/** Standard error, or the hosted run's when inside one. */
export function writeErr(text: string): void {
  const run = hosted.getStore();
  if (run) run.stderr.push(text);
  else process.stderr.write(text);
}

/**
 * Commands that cannot run inside the server: they are the server, they read files or standard
 * input by a path the server would resolve in its own folder, they prompt, or they change what
 * the server holds open (its keys, its whole database).
 */
const REFUSED = [['serve'], ['worker'], ['migrate'], ['backup'], ['keys'], ['registry', 'import'], ['lists', 'import'], ['liveness']];

/** The refused command `argv` is (its leading words), if it is one that cannot run inside the server. */
export function refusedInServer(argv: readonly string[]): string[] | undefined {
  const words = argv.filter((arg) => !arg.startsWith('-'));
  return REFUSED.find((prefix) => prefix.every((word, i) => words[i] === word));
}

export interface HostedAnswer {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** The longest request line the server reads: a command's arguments, not a file. */
const MAX_REQUEST_BYTES = 64 * 1024;

/**
 * Serves commands on `<dataDir>/vouch.sock` for as long as the server runs: one at a time, each
 * run by `execute` on the server's database. Returns the closer (it removes the socket file).
 */
export async function serveCommands(dataDir: string, database: Database, execute: (argv: string[]) => Promise<number>): Promise<() => Promise<void>> {
  const socketPath = path.join(dataDir, SOCKET_NAME);
  // A socket file left by a server that died holds no listener: the lock file proved it gone.
  fs.rmSync(socketPath, { force: true });
  let queue: Promise<unknown> = Promise.resolve();
  const server = net.createServer((socket) => {
    let received = '';
    socket.setEncoding('utf8');
    socket.on('error', () => {});
    socket.on('data', (chunk: string) => {
      received += chunk;
      if (received.length > MAX_REQUEST_BYTES) return socket.destroy();
      const newline = received.indexOf('\n');
      if (newline < 0) return;
      socket.removeAllListeners('data');
      const line = received.slice(0, newline);
      const answer = (queue = queue.then(() => runOne(line, database, execute)));
      void answer.then((result) => socket.end(`${JSON.stringify(result)}\n`));
    });
  });
  const previousMask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => resolve());
    });
  } finally {
    process.umask(previousMask);
  }
  fs.chmodSync(socketPath, 0o600);
  server.unref();
  return async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    fs.rmSync(socketPath, { force: true });
  };
}

async function runOne(line: string, database: Database, execute: (argv: string[]) => Promise<number>): Promise<HostedAnswer> {
  let argv: unknown;
  try {
    argv = (JSON.parse(line) as { argv?: unknown }).argv;
  } catch {
    argv = undefined;
  }
  if (!Array.isArray(argv) || !argv.every((arg) => typeof arg === 'string')) return { stdout: '', stderr: 'vouch: the running server could not read the command\n', exitCode: 2 };
  const refused = refusedInServer(argv);
  if (refused) {
    return {
      stdout: '',
      stderr: `vouch: \`vouch ${refused.join(' ')}\` cannot run while the server runs on the embedded database: stop the server first, or run Vouch on PostgreSQL with DATABASE_URL\n`,
      exitCode: 75,
    };
  }
  const run: HostedRun = { database, stdout: [], stderr: [] };
  const exitCode = await hosted.run(run, () => execute(argv as string[]));
  return { stdout: run.stdout.join(''), stderr: run.stderr.join(''), exitCode };
}

/**
 * Sends a command to the server running on `dataDir`, if it listens there; undefined when no
 * server answers on the socket (then the caller reports the folder in use as before).
 */
export async function sendToServer(dataDir: string, argv: string[]): Promise<HostedAnswer | undefined> {
  const socketPath = path.join(dataDir, SOCKET_NAME);
  if (!fs.existsSync(socketPath)) return undefined;
  return new Promise((resolve) => {
    const socket = net.connect(socketPath);
    let received = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify({ argv })}\n`));
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => resolve(undefined));
    socket.on('close', () => {
      try {
        resolve(JSON.parse(received) as HostedAnswer);
      } catch {
        resolve(undefined);
      }
    });
  });
}
