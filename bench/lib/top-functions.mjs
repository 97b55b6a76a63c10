// Summarises a V8 .cpuprofile: the functions with the most self time, and the files with the most
// self time. Usage: node bench/lib/top-functions.mjs FILE [N]
import fs from 'node:fs';

const [file, count = '30'] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/lib/top-functions.mjs FILE.cpuprofile [N]');
  process.exit(2);
}
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const self = new Map();
const dt = profile.timeDeltas;
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (dt[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const functions = new Map();
const files = new Map();
for (const [id, us] of self) {
  const { callFrame } = byId.get(id);
  const where = callFrame.url.replace(/^file:\/\//, '').replace(process.cwd() + '/', '') || '(native)';
  const name = `${callFrame.functionName || '(anonymous)'}  ${where}:${callFrame.lineNumber + 1}`;
  functions.set(name, (functions.get(name) ?? 0) + us);
  const pkg = where.includes('node_modules/') ? where.replace(/.*node_modules\/((?:@[^/]+\/)?[^/]+).*/, 'node_modules/$1') : where;
  files.set(pkg, (files.get(pkg) ?? 0) + us);
}
const show = (title, map) => {
  console.log(`\n${title} (of ${(total / 1000).toFixed(0)} ms sampled)`);
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(count))) {
    console.log(`${((100 * us) / total).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(1).padStart(8)} ms  ${name}`);
  }
};
show('self time by function', functions);
show('self time by file or package', files);
