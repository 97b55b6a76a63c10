/**
 * `npx tsx bench/screening-server.ts [--entities N] [--server URL] [--json]`
 *
 * A server holding a large list, as an operator runs one (issue 51's target: memory with
 * 1,000,000 entities ≤ 1.5 GB). In a throwaway database on the PostgreSQL server (default
 * postgres://postgres@127.0.0.1:5432/test), with the built CLI (`dist/main.js`, rebuilt when stale):
 * 1. `vouch serve` on the empty database: its resident memory once ready (the baseline);
 * 2. `vouch lists import FILE --format csv` of N synthetic entities (default 1,000,000): wall
 *    time, CPU and peak memory of the command (`/usr/bin/time`);
 * 3. `vouch serve` again: the time until it is ready (the index is built before it listens), its
 *    resident memory then and its peak while building, and the same after a few screenings
 *    through the public API.
 * Memory is the process's VmRSS and VmHWM from /proc; the ratio is against the baseline server.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { ensureBuilt } from './lib/build.js';
import { assertPostgresReachable, DEFAULT_SERVER_URL, displayUrl, withThrowawayDatabase } from './lib/database.js';
import { BenchError } from './lib/errors.js';
import { type Env, lastJsonLine, runCommand, startServer } from './lib/processes.js';
import { listCsv, syntheticEntities } from './lib/screening-names.js';

const run = promisify(execFile);

const { values: args } = parseArgs({
  options: {
    entities: { type: 'string', default: '1000000' },
    server: { type: 'string', default: process.env.DATABASE_URL ?? DEFAULT_SERVER_URL },
    json: { type: 'boolean', default: false },
  },
});
const ENTITIES = Number(args.entities);
const ROOT = path.resolve(import.meta.dirname, '..');
const SOURCE = 'bench-large';

/** VmRSS and VmHWM of a running process, in MB. */
function memoryOf(pid: number): { rssMb: number; peakMb: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs a command under /usr/bin/time: its output, wall seconds, CPU seconds and peak memory (MB). */
async function timed(command: string, commandArgs: string[], env: Env): Promise<{ stdout: string; wallSeconds: number; cpuSeconds: number; peakMb: number }> {
  const report = path.join(os.tmpdir(), `vouch-bench-time-${process.pid}`);
  try {
    const { stdout } = await run('/usr/bin/time', ['-o', report, '-f', '%e %U %S %M', command, ...commandArgs], { cwd: ROOT, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 });
    const [wall, user, system, maxKb] = fs.readFileSync(report, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number) as [number, number, number, number];
    return { stdout, wallSeconds: wall, cpuSeconds: user + system, peakMb: maxKb / 1024 };
  } catch (err) {
    const { stderr, message } = err as { stderr?: string; message: string };
    throw new BenchError(`${command} ${commandArgs.join(' ')} failed: ${(stderr || message).trim()}`);
  } finally {
    fs.rmSync(report, { force: true });
  }
}

/** A live account, enabled and funded, and its live secret (through the CLI, as an operator makes one). */
async function liveAccount(main: string, env: Env): Promise<string> {
  const args = ['org', 'create', '--name', 'Screening bench', '--risk-level', 'HIGH', '--enable', '--fund', '100000000', '--json'];
  return lastJsonLine<{ liveSecret: string }>(await runCommand('node', [main, ...args], { cwd: ROOT, env })).liveSecret;
}

async function main(): Promise<void> {
  if (!Number.isSafeInteger(ENTITIES) || ENTITIES < 1) throw new Error('--entities takes a whole number of 1 or more');
  await assertPostgresReachable(args.server);
  const mainJs = ensureBuilt(ROOT);
  await withThrowawayDatabase(args.server, async (url) => {
    const env: Env = { DATABASE_URL: url, VOUCH_DEMO: 'off', LOG_LEVEL: 'warn', VOUCH_ENCRYPTION_KEY: process.env.VOUCH_ENCRYPTION_KEY || randomBytes(32).toString('base64') };
    const serve = (name: string) => startServer({ name, command: 'node', args: [mainJs, 'serve'], cwd: ROOT, env, readyTimeoutMs: 600_000 });

    await runCommand('node', [mainJs, 'migrate'], { cwd: ROOT, env });
    const idle = await serve('idle server');
    await sleep(3_000);
    const baseline = memoryOf(idle.pid);
    await idle.stop();

    const file = path.join(os.tmpdir(), `vouch-bench-list-${process.pid}.csv`);
    fs.writeFileSync(file, listCsv(syntheticEntities(ENTITIES, 51, SOURCE)));
    const fileMb = fs.statSync(file).size / 1e6;
    let imported;
    try {
      imported = await timed('node', [mainJs, 'lists', 'import', file, '--source', SOURCE, '--format', 'csv', '--json'], env);
    } finally {
      fs.rmSync(file, { force: true });
    }
    const importResult = lastJsonLine<{ version: number; entities: number }>(imported.stdout);

    const started = Date.now();
    const loaded = await serve('server with the list');
    const readySeconds = (Date.now() - started) / 1000;
    try {
      await sleep(3_000);
      const afterLoad = memoryOf(loaded.pid);
      const secret = await liveAccount(mainJs, env);
      const names = ['Oluwaseun Adeyemi', 'Muhammadu Bello', 'Chukwuemeka Okafor', 'Vladimir Ivanov', 'Zenith Petroleum Ltd', 'Ahmad Al-Rashid', 'Wang Wei', 'John Smith', 'Aisha Abdullahi', 'Ngozi Okonjo'];
      let hits = 0;
      for (const [i, name] of names.entries()) {
        const response = await fetch(`${loaded.url}/v1/verifications/screenings`, {
          method: 'POST',
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ reference: `bench-${i}`, subject: { type: i === 4 ? 'organization' : 'person', name } }),
        });
        const body = (await response.json()) as { data?: { hits?: unknown[] } };
        if (response.status !== 201) throw new BenchError(`POST /v1/screenings answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
        hits += body.data?.hits?.length ?? 0;
      }
      const afterScreenings = memoryOf(loaded.pid);
      const report = {
        server: displayUrl(args.server),
        entities: importResult.entities,
        listFileMb: fileMb,
        idleServer: baseline,
        import: { wallSeconds: imported.wallSeconds, cpuSeconds: imported.cpuSeconds, peakMb: imported.peakMb },
        loadedServer: { readySeconds, ...afterLoad, afterScreenings: { ...afterScreenings, screenings: names.length, hits } },
        overIdleMb: afterScreenings.rssMb - baseline.rssMb,
      };
      if (args.json) console.log(JSON.stringify(report));
      else {
        const mb = (value: number) => `${value.toFixed(0)} MB`;
        console.log(`a server holding ${report.entities.toLocaleString('en')} entities on ${report.server} (list file ${fileMb.toFixed(0)} MB)`);
        console.log(`idle server: ${mb(baseline.rssMb)} resident (peak ${mb(baseline.peakMb)})`);
        console.log(`vouch lists import: ${imported.wallSeconds.toFixed(1)} s wall, ${imported.cpuSeconds.toFixed(1)} s CPU, peak ${mb(imported.peakMb)}`);
        console.log(`vouch serve with the list: ready in ${readySeconds.toFixed(1)} s, ${mb(afterLoad.rssMb)} resident (peak ${mb(afterLoad.peakMb)})`);
        console.log(`after ${names.length} screenings (${hits} hits): ${mb(afterScreenings.rssMb)} resident (peak ${mb(afterScreenings.peakMb)}); ${mb(report.overIdleMb)} over the idle server, ${(afterScreenings.rssMb / baseline.rssMb).toFixed(2)}×`);
      }
    } finally {
      await loaded.stop();
    }
  });
}

await main();
