import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { WorkerCalls } from '../../src/platform/worker-calls.js';

/** Echoes `{ id, echo }` after `delay` ms; exits with code 3 on `{ exit: true }`. */
const ECHO = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (message) => {
  if (message.exit) process.exit(3);
  setTimeout(() => parentPort.postMessage({ id: message.id, echo: message.echo }), message.delay ?? 0);
});
`;

type Echo = { id: number; echo: string };

const run = promisify(execFile);

describe('WorkerCalls: the requests in flight to a worker thread', () => {
  it('answers each request with the reply carrying its id, whatever order the replies come in', async () => {
    const gone: unknown[] = [];
    const calls = new WorkerCalls<Echo>(new Worker(ECHO, { eval: true }), 'echo worker', (c) => gone.push(c));
    try {
      const slow = calls.send({ echo: 'slow', delay: 50 });
      const fast = calls.send({ echo: 'fast' });
      expect(await Promise.all([slow, fast])).toEqual([expect.objectContaining({ echo: 'slow' }), expect.objectContaining({ echo: 'fast' })]);
      expect(gone).toEqual([]);
    } finally {
      await calls.close(new Error('closed'));
    }
  });

  it('fails every waiting request when the worker exits, and every later one; tells its owner once', async () => {
    const gone: unknown[] = [];
    const calls = new WorkerCalls<Echo>(new Worker(ECHO, { eval: true }), 'echo worker', (c) => gone.push(c));
    const waiting = expect(calls.send({ echo: 'never', delay: 10_000 })).rejects.toThrow('echo worker exited with code 3');
    const exit = expect(calls.send({ exit: true })).rejects.toThrow('echo worker exited with code 3');
    await Promise.all([waiting, exit]);
    await expect(calls.send({ echo: 'after' })).rejects.toThrow('echo worker exited with code 3');
    expect(gone).toEqual([calls]);
  });

  it('close fails what is waiting with its own error and stops the worker', async () => {
    const gone: unknown[] = [];
    const calls = new WorkerCalls<Echo>(new Worker(ECHO, { eval: true }), 'echo worker', (c) => gone.push(c));
    const waiting = expect(calls.send({ echo: 'never', delay: 10_000 })).rejects.toThrow('engine closed');
    await calls.close(new Error('engine closed'));
    await waiting;
    expect(gone).toEqual([calls]);
  });

  it('does not keep the process alive while idle: a child process with an idle worker exits by itself', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-worker-calls-'));
    try {
      const script = path.join(dir, 'idle.mts');
      await fs.writeFile(
        script,
        `import { Worker } from 'node:worker_threads';
        import { WorkerCalls } from ${JSON.stringify(fileURLToPath(new URL('../../src/platform/worker-calls.ts', import.meta.url)))};
        const calls = new WorkerCalls(new Worker(${JSON.stringify(ECHO)}, { eval: true }), 'echo worker', () => {});
        console.log((await calls.send({ echo: 'once' })).echo);`,
      );
      // Without the unref once answered, the child would wait on its worker until the timeout kills it.
      const { stdout } = await run(process.execPath, ['--import', 'tsx', script], { timeout: 20_000 });
      expect(stdout.trim()).toBe('once');
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
