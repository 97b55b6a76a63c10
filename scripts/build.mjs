/**
 * Builds the server bundle (dist/), the web app (web/dist/) and the hosted verification flow with
 * the web SDK (web/verify/dist/). With --if-changed (what
 * `npm start` runs first) a part is rebuilt only when its inputs changed since its last build:
 * each build leaves a stamp, a hash of its inputs' contents, in node_modules/.cache/vouch (and a
 * part whose output is gone is rebuilt whatever its stamp says). Plain JavaScript
 * so the check itself starts in a few tens of milliseconds; the builders load only when needed.
 *
 * Usage: node scripts/build.mjs [--if-changed]
 * (`npm start` runs scripts/start.mjs, which calls buildParts({ ifChanged: true }) in its own process.)
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STAMPS = path.join(ROOT, 'node_modules/.cache/vouch');

/** Every file under the given paths (relative to the root), skipping the excluded folders. */
function files(paths, exclude = []) {
  const found = [];
  for (const entry of paths) {
    const full = path.join(ROOT, entry);
    if (!existsSync(full)) continue;
    if (!entry.includes('.') || entry.endsWith('/')) {
      for (const dirent of readdirSync(full, { recursive: true, withFileTypes: true })) {
        if (!dirent.isFile()) continue;
        const file = path.relative(ROOT, path.join(dirent.parentPath, dirent.name));
        if (!exclude.some((folder) => file.startsWith(folder))) found.push(file);
      }
    } else {
      found.push(entry);
    }
  }
  return found.sort();
}

function fingerprint(inputs) {
  const hash = createHash('sha256');
  for (const file of inputs) hash.update(file).update('\0').update(readFileSync(path.join(ROOT, file))).update('\0');
  return hash.digest('hex');
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const parts = [
  {
    name: 'server',
    stamp: 'server.stamp',
    output: 'dist/main.js',
    inputs: () => files(['src', 'scripts/build-server.ts', 'package-lock.json', 'tsconfig.json']),
    build: () => run(process.execPath, ['--import', 'tsx', 'scripts/build-server.ts']),
  },
  {
    name: 'web app',
    stamp: 'web.stamp',
    output: 'web/dist/index.html',
    inputs: () => files(['web', 'scripts/precompress.mjs', 'package-lock.json'], ['web/dist', 'web/verify']),
    build: () => {
      run(process.execPath, [path.join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'web/vite.config.ts', '--logLevel', 'warn']);
      run(process.execPath, ['scripts/precompress.mjs', 'web/dist']);
    },
  },
  {
    name: 'hosted verification flow',
    stamp: 'verify.stamp',
    output: 'web/verify/dist/index.html',
    inputs: () => files(['web/verify', 'package-lock.json'], ['web/verify/dist']),
    build: () => run(process.execPath, ['web/verify/build.mjs']),
  },
];

/** Builds every part, or with `ifChanged` only those whose sources changed since their last build. */
export function buildParts({ ifChanged }) {
  for (const part of parts) buildPart(part, ifChanged);
}

function buildPart(part, ifChanged) {
  const stampFile = path.join(STAMPS, part.stamp);
  const stamp = fingerprint(part.inputs());
  const built = existsSync(path.join(ROOT, part.output)) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp;
  if (ifChanged && built) return;
  if (ifChanged) process.stderr.write(`Building the ${part.name} (its sources changed since the last build)...\n`);
  part.build();
  mkdirSync(STAMPS, { recursive: true });
  writeFileSync(stampFile, stamp);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  buildParts({ ifChanged: process.argv.includes('--if-changed') });
}
