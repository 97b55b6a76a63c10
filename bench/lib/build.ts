import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BenchError } from './errors.js';

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    newest = Math.max(newest, fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** The compiled CLI the benchmarks run, rebuilt with `npm run build` when missing or older than src/. */
export function ensureBuilt(root: string): string {
  const main = path.join(root, 'dist/main.js');
  const stale = !fs.existsSync(main) || fs.statSync(main).mtimeMs < newestMtime(path.join(root, 'src'));
  if (stale) {
    process.stderr.write('bench: dist/ is missing or older than src/, running npm run build\n');
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
    if (build.status !== 0) throw new BenchError('npm run build failed; fix the build (or run it yourself) and try again');
  }
  return main;
}
