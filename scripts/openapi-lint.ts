/**
 * Lints the OpenAPI document the route schemas produce with Redocly's `recommended` rules
 * (redocly.yaml at the root): `npm run lint:openapi`, run by CI after the type check. No server
 * starts: the document comes from a throwaway in-memory app, written to a temporary file.
 *
 * Usage: tsx scripts/openapi-lint.ts [--out FILE]   (--out keeps the document at FILE)
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from './openapi-types.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const REDOCLY = path.join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');

const outIndex = process.argv.indexOf('--out');
const keep = outIndex > 0 ? process.argv[outIndex + 1] : undefined;
if (outIndex > 0 && !keep) {
  process.stderr.write('usage: tsx scripts/openapi-lint.ts [--out FILE]\n');
  process.exit(2);
}

const folder = keep ? undefined : await mkdtemp(path.join(os.tmpdir(), 'vouch-openapi-'));
const file = keep ? path.resolve(keep) : path.join(folder!, 'openapi.json');
try {
  await writeFile(file, `${JSON.stringify(await openApiDocument(), null, 2)}\n`);
  const lint = spawnSync(process.execPath, [REDOCLY, 'lint', file, '--config', path.join(ROOT, 'redocly.yaml')], {
    stdio: 'inherit',
    // No usage reports or update checks from a build: nothing leaves the machine.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  process.exitCode = lint.status ?? 1;
} finally {
  if (folder) await rm(folder, { recursive: true, force: true });
}
