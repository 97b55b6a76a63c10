import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';

/**
 * What every `vouch` command loads before it reads its arguments (the build's main.js and the
 * chunks it imports statically): not the libraries only the server or an image needs. Each was a
 * tenth of a second or more of every command's start on a slow machine (docs/benchmarks.md,
 * twenty-fourth session): sharp (libvips), ioredis with @fastify/rate-limit, and the undici that
 * pg's check for Cloudflare Workers loaded (scripts/build-server.ts).
 */
const BUILD = inject('vouchBuild');

/** The files main.js loads before it runs: itself and every chunk it imports statically, transitively. */
async function staticallyLoaded(): Promise<Map<string, string>> {
  const loaded = new Map<string, string>();
  const queue = ['main.js'];
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (loaded.has(file)) continue;
    const text = await fs.readFile(path.join(BUILD, file), 'utf8');
    loaded.set(file, text);
    // `import {...} from "./chunk.js"` and `import "./chunk.js"`; `import("./x.js")` is dynamic, not matched.
    for (const match of text.matchAll(/^import\s+(?:[^'"();]*?\s+from\s+)?["']\.\/([\w.-]+\.js)["'];?$/gm)) queue.push(match[1]!);
  }
  return loaded;
}

describe('what a vouch command loads at its start', () => {
  it('imports no chunk with ioredis, the rate limiter or pg\'s runtime probe, and no sharp', async () => {
    const loaded = await staticallyLoaded();
    expect(loaded.size).toBeGreaterThan(2);
    const all = [...loaded.values()].join('\n');
    // The chunks keep their modules' paths in esbuild's comments.
    expect(all).toContain('node_modules/pg/lib/connection.js');
    expect(all).not.toContain('node_modules/ioredis/');
    expect(all).not.toContain('node_modules/@fastify/rate-limit/');
    expect(all).not.toContain('isCloudflareRuntime');
    expect(all).not.toMatch(/^import\s+[^;]*from\s+["']sharp["']/m);
    // They are still in the build, for the commands that need them.
    const files = await fs.readdir(BUILD);
    const rest = await Promise.all(files.filter((file) => file.endsWith('.js') && !loaded.has(file)).map((file) => fs.readFile(path.join(BUILD, file), 'utf8')));
    expect(rest.join('\n')).toContain('node_modules/ioredis/');
  });

  it('has loaded neither undici nor sharp when it has printed its help', async () => {
    // A hook that says at exit what the process loaded: Node's own modules, and CommonJS packages.
    const hook = `data:text/javascript,${encodeURIComponent(`
      import { createRequire } from 'node:module';
      const require = createRequire(process.cwd() + '/');
      process.on('exit', () => {
        const undici = process.moduleLoadList.some((name) => name.includes('undici'));
        const sharp = Object.keys(require.cache).some((file) => /[\\\\/]node_modules[\\\\/]sharp[\\\\/]/.test(file));
        process.stderr.write('LOADED ' + JSON.stringify({ undici, sharp }) + '\\n');
      });`)}`;
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', hook, path.join(BUILD, 'main.js'), '--help'], { env: { ...process.env, LOG_LEVEL: 'warn' } });
    expect(stdout).toContain('Usage: vouch');
    expect(stderr).toContain('LOADED {"undici":false,"sharp":false}');
  });
});
