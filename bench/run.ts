/**
 * `npm run bench [-- <section>...] [--rounds N] [--duration S] [--warmup S] [--connections N]`
 * Runs the named benchmark sections (all by default) against throwaway databases on the
 * PostgreSQL server of DATABASE_URL, prints a table per section and one final JSON line.
 * docs/benchmarks.md says what each section measures and what was measured.
 */
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureBuilt } from './lib/build.js';
import { cleanUpOnSignals } from './lib/cleanup.js';
import { assertPostgresReachable, DEFAULT_SERVER_URL } from './lib/database.js';
import { BenchError } from './lib/errors.js';
import { formatSection } from './lib/report.js';
import type { BenchContext, Section, SectionReport } from './lib/section.js';
import { biometrics } from './sections/biometrics.js';
import { decisionFairness } from './sections/decision-fairness.js';
import { identity } from './sections/identity.js';
import { lists } from './sections/lists.js';
import { liveness } from './sections/liveness.js';
import { portal } from './sections/portal.js';
import { ratelimit } from './sections/ratelimit.js';
import { registryImport } from './sections/registry-import.js';
import { upstreams } from './sections/upstreams.js';
import { webhookFailover } from './sections/webhook-failover.js';
import { webhooks } from './sections/webhooks.js';

const SECTIONS: Section[] = [identity, registryImport, biometrics, liveness, webhooks, webhookFailover, lists, portal, upstreams, ratelimit, decisionFairness];

function positiveInt(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new BenchError(`--${name} must be a whole number of at least ${min}, got "${raw}"`);
  return value;
}

function parse(argv: string[]): { sections: Section[]; rounds: number | undefined; load: BenchContext['load'] } {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      rounds: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
    },
  });
  const unknown = positionals.filter((name) => !SECTIONS.some((section) => section.name === name));
  if (unknown.length > 0) {
    throw new BenchError(`unknown section ${unknown.join(', ')}; the sections are ${SECTIONS.map((section) => section.name).join(', ')}`);
  }
  return {
    sections: positionals.length > 0 ? SECTIONS.filter((section) => positionals.includes(section.name)) : SECTIONS,
    rounds: values.rounds === undefined ? undefined : positiveInt('rounds', values.rounds, 1),
    load: {
      connections: positiveInt('connections', values.connections, 50),
      duration: positiveInt('duration', values.duration, 10),
      warmup: positiveInt('warmup', values.warmup, 3, 0),
    },
  };
}

async function main(): Promise<boolean> {
  const options = parse(process.argv.slice(2));
  // Personal data is encrypted at rest and PostgreSQL needs the key from the environment: every
  // process the bench starts (and the sections' own database handles) shares this throwaway key.
  process.env.VOUCH_ENCRYPTION_KEY ||= Buffer.alloc(32, 0x3c).toString('base64');
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const serverUrl = process.env.DATABASE_URL || DEFAULT_SERVER_URL;
  await assertPostgresReachable(serverUrl);
  const context: Omit<BenchContext, 'rounds'> = { root, vouchMain: ensureBuilt(root), serverUrl, load: options.load };

  const reports: SectionReport[] = [];
  for (const section of options.sections) {
    process.stderr.write(`bench: ${section.name}: ${section.description}\n`);
    const report = await section.run({ ...context, rounds: options.rounds ?? section.defaultRounds ?? 1 });
    reports.push(report);
    process.stdout.write(`${formatSection(report)}\n\n`);
  }
  const targets = reports.flatMap((report) => ('targets' in report ? report.targets : []));
  const targetsMet = targets.every((target) => target.met);
  const summary = {
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model ?? 'unknown', node: process.version },
    sections: Object.fromEntries(reports.map((report) => [report.section, 'skipped' in report ? { skipped: report.skipped } : { ...report.result, targets: report.targets }])),
    targetsMet,
  };
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  return targetsMet;
}

cleanUpOnSignals();
try {
  const targetsMet = await main();
  // Missed targets are a result, not a failure of the run: reported, exit code 0.
  if (!targetsMet) process.stderr.write('bench: some targets were missed (see above)\n');
  process.exit(0);
} catch (err) {
  process.stderr.write(err instanceof BenchError ? `bench: ${err.message}\n` : `bench: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
}
