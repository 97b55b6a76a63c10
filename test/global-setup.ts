import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { buildServer } from '../scripts/build-server.js';
import { adminQuery } from './helpers/postgres-admin.js';

/**
 * Once per `vitest run`, before any test file:
 *
 * - builds the server as `npm run build` does (scripts/build-server.ts), so every spawned `vouch`
 *   is what `npm start` runs, and starts in a fraction of a second instead of compiling itself
 *   through tsx;
 * - migrates one embedded database and keeps it twice: as a data folder that each CLI test's
 *   throwaway environment copies, and as a dump each in-memory test database loads. PGlite's
 *   initdb costs seconds; a copy costs milliseconds.
 * - with DATABASE_URL, migrates one database on that server, which each test file's database is
 *   created from (`create database ... template`): on a slow two-core machine a copy took 0.1 s,
 *   migrating an empty database 0.6 s, once per file (docs/benchmarks.md, twentieth session).
 *
 * The build lives under .test-build/ (ignored by git) beside package.json, so it resolves the
 * project's node_modules and web/dist as dist/ does. It is removed when the run ends.
 */

declare module 'vitest' {
  export interface ProvidedContext {
    /** The build's folder: its main.js is the CLI. */
    vouchBuild: string;
    /** A migrated embedded database: a data folder (VOUCH_DATA_DIR) to copy. */
    pgliteTemplateDir: string;
    /** The same database as a PGlite dump (`dumpDataDir`) for in-memory databases. */
    pgliteTemplateDump: string;
    /** With DATABASE_URL: a migrated database on that server to create test databases from. */
    postgresTemplate: string | null;
  }
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  await fs.mkdir(path.join(ROOT, '.test-build'), { recursive: true });
  const out = await fs.mkdtemp(path.join(ROOT, '.test-build', 'run-'));
  await buildServer(out);

  const templateDir = path.join(out, 'template-data');
  const env: NodeJS.ProcessEnv = { ...process.env, VOUCH_DATA_DIR: templateDir, LOG_LEVEL: 'warn' };
  delete env.DATABASE_URL;
  await promisify(execFile)(process.execPath, [path.join(out, 'main.js'), 'migrate', '--json'], { cwd: ROOT, env });

  const pglite = await PGlite.create(path.join(templateDir, 'pglite'));
  const dump = await pglite.dumpDataDir('none');
  await pglite.close();
  const dumpFile = path.join(out, 'template.tar');
  await fs.writeFile(dumpFile, Buffer.from(await dump.arrayBuffer()));

  const serverUrl = process.env.DATABASE_URL;
  const postgresTemplate = serverUrl ? `vouch_template_${randomBytes(6).toString('hex')}` : null;
  if (serverUrl && postgresTemplate) {
    await adminQuery(serverUrl, `create database ${postgresTemplate}`);
    const url = new URL(serverUrl);
    url.pathname = `/${postgresTemplate}`;
    await promisify(execFile)(process.execPath, [path.join(out, 'main.js'), 'migrate', '--json'], { cwd: ROOT, env: { ...env, DATABASE_URL: url.toString() } });
  }

  project.provide('vouchBuild', out);
  project.provide('pgliteTemplateDir', templateDir);
  project.provide('pgliteTemplateDump', dumpFile);
  project.provide('postgresTemplate', postgresTemplate);
  return async () => {
    if (serverUrl && postgresTemplate) await adminQuery(serverUrl, `drop database if exists ${postgresTemplate} with (force)`);
    await fs.rm(out, { recursive: true, force: true });
  };
}
