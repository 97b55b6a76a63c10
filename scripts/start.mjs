/**
 * `npm start`: rebuilds what changed since the last build (scripts/build.mjs), then runs
 * `vouch serve` in this same process, so a start costs one Node process rather than three.
 */
import { buildParts } from './build.mjs';

buildParts({ ifChanged: true });
process.argv = [process.argv[0], new URL('../dist/main.js', import.meta.url).pathname, 'serve', ...process.argv.slice(2)];
await import('../dist/main.js');
