import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CliEnv } from '../helpers/cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every `vouch worker` these helpers started and that has not exited: afterEach kills them. */
export const workerProcesses = new Set<ChildProcess>();

/** Starts `vouch worker` from the sources and waits until it says it runs. */
export function startWorkerProcess(env: CliEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src', 'main.ts'), 'worker'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  workerProcesses.add(child);
  child.on('exit', () => workerProcesses.delete(child));
  return new Promise((resolve, reject) => {
    let output = '';
    const collect = (chunk: Buffer) => {
      output += String(chunk);
      if (output.includes('Vouch worker is running')) resolve(child);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', (chunk: Buffer) => (output += String(chunk)));
    child.on('exit', (code, signal) => reject(new Error(`vouch worker exited (${code ?? signal}) before it ran:\n${output}`)));
  });
}

/** SIGKILL: the process gets no chance to finish or record anything. */
export function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.on('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
