/**
 * Builds the hosted verification flow and the web SDK into web/verify/dist (what
 * src/sessions/hosted serves): assets/flow-HASH.{js,css} (cached for a year), sdk/vouch.js (the
 * stable /sdk/v1/vouch.js), and index.html, the page shell naming the hashed files. Every text
 * file gets .br and .gz beside it. esbuild, classic scripts for older phones' browsers.
 *
 * Usage: node web/verify/build.mjs (scripts/build.mjs runs it as the "hosted flow" part).
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const OUT = path.join(HERE, 'dist');

/**
 * Phones' browsers still in use here: Chrome and Android WebView 64+, and Safari 14.1+ (iOS 14.3
 * is the first to give in-app browsers the camera at all). ES2017 syntax runs on older ones too.
 */
const TARGET = ['es2017', 'chrome64', 'safari14.1', 'firefox78'];

async function compressed(file) {
  const body = await readFile(file);
  await writeFile(`${file}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
  await writeFile(`${file}.gz`, gzipSync(body, { level: 9 }));
}

export async function buildHostedFlow(out = OUT) {
  await rm(out, { recursive: true, force: true });
  const flow = await build({
    entryPoints: { flow: path.join(HERE, 'src/main.ts') },
    outdir: path.join(out, 'assets'),
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'iife',
    target: TARGET,
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  await build({
    entryPoints: { vouch: path.join(HERE, 'src/sdk.ts') },
    outdir: path.join(out, 'sdk'),
    bundle: true,
    minify: true,
    format: 'iife',
    target: TARGET,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const outputs = Object.keys(flow.metafile.outputs).map((file) => `/verify/assets/${path.basename(file)}`);
  const script = outputs.find((file) => file.endsWith('.js'));
  const style = outputs.find((file) => file.endsWith('.css'));
  if (!script || !style) throw new Error('the flow build made no script or no stylesheet');
  const shell = (await readFile(path.join(HERE, 'shell.html'), 'utf8')).replace('%SCRIPT%', script).replace('%STYLE%', style);
  await mkdir(out, { recursive: true });
  await writeFile(path.join(out, 'index.html'), shell);
  for (const file of [...outputs.map((name) => path.join(out, 'assets', path.basename(name))), path.join(out, 'sdk', 'vouch.js'), path.join(out, 'index.html')]) {
    await compressed(file);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildHostedFlow();
}
