/**
 * Builds the server and CLI into dist/ (or the folder given): one esbuild bundle with a chunk per
 * lazily loaded part (`serve`, `worker`, the test identities), so `vouch <command>` loads a few
 * files instead of the hundreds of small modules its dependencies ship as. A command starts in
 * well under a second; the per-module build tsc emitted took over a second just to load.
 *
 * Dependencies with native code or that read their own files at run time stay outside the
 * bundle and load from node_modules as usual. Type checking is `npm run typecheck`.
 *
 * Usage: tsx scripts/build-server.ts [OUTDIR]   (default: dist)
 */
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import type { DB } from '../src/platform/db/schema.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Packages loaded from node_modules at run time: native addons, WASM and files beside their code. */
const EXTERNAL = [
  '@electric-sql/pglite',
  '@node-rs/argon2',
  '@vladmandic/face-api',
  '@tensorflow/*',
  '@fastify/swagger-ui',
  'sharp',
  'pg-native',
  'pino',
  'nodemailer',
];

/**
 * pg chooses its socket when it loads (pg/lib/stream.js): to tell Cloudflare Workers from Node it
 * builds a fetch `Response`, and on Node 20 that loads undici, 0.1-0.2 s of every `vouch`
 * command's start on a slow machine, for a server that never fetches at start (docs/benchmarks.md,
 * twenty-fourth session). Vouch runs on Node only: the bundle gets pg's Node branch, the same two
 * functions. The build stops if pg's file no longer has the shape this replaces.
 */
const pgOnNode: Plugin = {
  name: 'pg-on-node',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]pg[\\/]lib[\\/]stream\.js$/ }, async (args) => {
      const original = await fs.readFile(args.path, 'utf8');
      if (!original.includes('function getNodejsStreamFuncs()') || !original.includes('const { getStream, getSecureStream } = getStreamFuncs()')) {
        return { errors: [{ text: `${args.path} changed: check that replacing it with pg's Node socket functions still holds (scripts/build-server.ts)` }] };
      }
      return {
        loader: 'js',
        contents: `module.exports = {
  getStream() { const net = require('net'); return new net.Socket(); },
  getSecureStream(options) { const tls = require('tls'); return tls.connect(options); },
};`,
      };
    });
  },
};

/**
 * `await import('pkg')` of a CommonJS package gives, under Node, a namespace with the package's
 * named exports beside `default`; esbuild's chunk for it exports `default` alone. @fastify/cookie
 * loads cookie that way (`cookieModule.parseCookie`), and since cookie is its CommonJS release
 * (package.json `overrides`) every request with a cookie, and every sign-in, answered 500 in the
 * built server while the tests, run from the sources, passed (test/serve.test.ts now signs in).
 * Here every `import()` of a package's CommonJS file goes through a module that exports what the
 * file exports, by name, as Node does (the names read by loading the file in the build).
 */
const commonJsNamespaces: Plugin = {
  name: 'commonjs-namespaces',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.kind !== 'dynamic-import' || args.pluginData === 'commonjs-namespaces') return undefined;
      const resolved = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: 'commonjs-namespaces' });
      if (resolved.errors.length > 0 || resolved.external || !isCommonJs(resolved.path)) return undefined;
      return { path: resolved.path, namespace: 'commonjs-namespace' };
    });
    build.onLoad({ filter: /.*/, namespace: 'commonjs-namespace' }, (args) => {
      const names = Object.keys(createRequire(args.path)(args.path) as object).filter((name) => name !== 'default' && /^[A-Za-z_$][\w$]*$/.test(name));
      const file = JSON.stringify(args.path);
      return {
        loader: 'js',
        resolveDir: path.dirname(args.path),
        contents: [`const cjs = require(${file});`, 'export default cjs;', ...names.map((name) => `export const ${name} = cjs.${name};`)].join('\n'),
      };
    });
  },
};

/** A file Node loads as CommonJS: `.cjs`, or `.js` in a package whose package.json does not say `"type": "module"`. */
function isCommonJs(file: string): boolean {
  if (file.endsWith('.cjs')) return true;
  if (!file.endsWith('.js')) return false;
  for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) return (JSON.parse(readFileSync(manifest, 'utf8')) as { type?: string }).type !== 'module';
  }
  return true;
}

/** Builds into `outdir` (emptied first): OUTDIR/main.js is the CLI, OUTDIR/migrations its SQL, and the embedded database's template. */
export async function buildServer(outdir: string): Promise<void> {
  await fs.rm(outdir, { recursive: true, force: true });
  await build({
    absWorkingDir: ROOT,
    entryPoints: { main: 'src/main.ts' },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Node 20.10+ reads `import ... with { type: 'json' }`; esbuild's node20 table predates that.
    supported: { 'import-attributes': true },
    external: EXTERNAL,
    plugins: [pgOnNode, commonJsNamespaces],
    // Bundled CommonJS dependencies call require(); ESM output has none of its own.
    banner: { js: "import { createRequire as __vouchCreateRequire } from 'node:module'; const require = __vouchCreateRequire(import.meta.url);" },
    // Chunks beside main.js: migrate.ts finds its SQL in ./migrations next to whichever holds it.
    chunkNames: '[name]-[hash]',
    sourcemap: true,
    logLevel: 'warning',
  });
  await fs.cp(path.join(ROOT, 'src/platform/db/migrations'), path.join(outdir, 'migrations'), { recursive: true });
  await writeEmbeddedTemplate(outdir);
}

/**
 * OUTDIR/pglite-template.tar.gz: an embedded database with every migration applied, which the
 * first start on a new data folder loads instead of running PGlite's initdb and the migrations
 * (src/platform/db/open.ts): about 0.8 s instead of 4.
 */
async function writeEmbeddedTemplate(outdir: string): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { Kysely } = await import('kysely');
  const { PGliteDialect } = await import('../src/platform/db/pglite-dialect.js');
  const { listMigrations, migrate } = await import('../src/platform/db/migrate.js');
  const { PGLITE_TEMPLATE } = await import('../src/platform/db/open.js');
  const pglite = await PGlite.create('memory://');
  const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite) });
  try {
    await migrate(db, listMigrations(path.join(outdir, 'migrations')));
    const dump = await pglite.dumpDataDir('gzip');
    await fs.writeFile(path.join(outdir, PGLITE_TEMPLATE), Buffer.from(await dump.arrayBuffer()));
  } finally {
    await db.destroy();
    await pglite.close();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outdir = path.resolve(ROOT, process.argv[2] ?? 'dist');
  await buildServer(outdir);
}
