import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { throwawayEnv, type ThrowawayEnv } from '../helpers/cli.js';

const run = promisify(execFile);
const MAIN = path.join(inject('vouchBuild'), 'main.js');
const WORKLOAD = fileURLToPath(new URL('./fixtures/pretenuring-workload.ts', import.meta.url));
/** What V8 prints for each allocation site it judges, with `--trace-pretenuring-statistics`. */
const JUDGED = /pretenuring: AllocationSite/g;

const judged = (output: string) => output.match(JUDGED)?.length ?? 0;

/**
 * `vouch serve` turns off V8's allocation-site pretenuring (src/platform/heap.ts): a request's
 * objects, found alive by a young collection while requests are in flight, were moved to the old
 * generation and freed only by full collections, which started most of the lists' latency
 * episodes (docs/benchmarks.md, twelfth session).
 */
describe('the heap of vouch serve', () => {
  it('V8 judges no allocation site once tuneHeapForServing has run, at run time, where it judges many without', async () => {
    const workload = (...args: string[]) => run(process.execPath, ['--trace-pretenuring-statistics', '--import', 'tsx', WORKLOAD, ...args], { maxBuffer: 16 * 1024 * 1024 });
    const [plain, tuned] = await Promise.all([workload(), workload('tuned')]);
    expect(plain.stdout).toContain('made');
    expect(judged(plain.stdout)).toBeGreaterThan(0);
    expect(tuned.stdout).toContain('made');
    expect(judged(tuned.stdout)).toBe(0);
  });

  describe('a running server', () => {
    let throwaway: ThrowawayEnv;
    beforeAll(async () => {
      throwaway = await throwawayEnv();
    });
    afterAll(async () => {
      await throwaway?.cleanup();
    });

    it('judges no allocation site while it answers requests', async () => {
      const child = spawn(process.execPath, ['--trace-pretenuring-statistics', MAIN, 'serve'], {
        env: { ...throwaway.env, PORT: '0', HOST: '127.0.0.1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      try {
        let stdout = '';
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        const url = await new Promise<string>((resolve, reject) => {
          child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
            stdout += chunk;
            const found = /^\s*API\s+(http\S+)$/m.exec(stdout)?.[1];
            if (found) resolve(found);
          });
          void exited.then(() => reject(new Error(`vouch serve exited before its banner:\n${stdout}\n${stderr}`)));
        });
        const sinceReady = stdout.length;
        // Enough requests for many young collections: the API description, ten at a time.
        await Promise.all(
          Array.from({ length: 10 }, async () => {
            for (let i = 0; i < 60; i++) {
              const response = await fetch(`${url}/openapi.json`);
              expect(response.status).toBe(200);
              await response.arrayBuffer();
            }
          }),
        );
        expect(judged(stdout.slice(sinceReady)), stdout.slice(sinceReady, sinceReady + 2_000)).toBe(0);
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    }, 90_000);
  });
});
