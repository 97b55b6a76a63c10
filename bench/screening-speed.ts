/**
 * `npx tsx bench/screening-speed.ts [--kit DIR] [--entities N] [--screenings N] [--json]`
 *
 * The name matcher's cost, in CPU time (process.cpuUsage over many screenings) and memory (heap
 * and RSS after a garbage collection, before and after building the index):
 * 1. over the official lists in the kit (UN consolidated list + OFAC SDN CSV; skipped without the kit);
 * 2. over a synthetic list of N entities (default 1,000,000) from realistic name parts;
 * 3. monitoring: N subjects (default 1,000,000) screened against an index of 100 changed entities.
 * Prints a table and one JSON line.
 */
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { IndexedEntity, ScreeningSubject } from '../src/screening/entity.js';
import { ScreeningIndex } from '../src/screening/matching/index.js';
import { ofacEntities, readCsvRecords, screeningKit, subjectOfRow, unEntities } from './lib/screening-kit.js';
import { seededRandom, syntheticEntities, syntheticSubject } from './lib/screening-names.js';
import path from 'node:path';

const SCRIPT = 'screening-speed';
const MB = 1024 * 1024;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

interface Memory {
  heapMB: number;
  rssMB: number;
}

function memory(): Memory {
  gc();
  gc();
  const usage = process.memoryUsage();
  return { heapMB: usage.heapUsed / MB, rssMB: usage.rss / MB };
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

interface Run {
  label: string;
  entities: number;
  buildMs: number;
  indexHeapMB: number;
  indexRssMB: number;
  screenings: number;
  cpuMsPerScreening: number;
  p99Ms: number;
  hitsPerScreening: number;
}

function measure(label: string, load: () => IndexedEntity[], subjects: ScreeningSubject[]): Run {
  const entities = load();
  const before = memory();
  const buildStart = process.cpuUsage();
  const index = new ScreeningIndex(entities);
  const buildMs = cpuMs(buildStart);
  const after = memory();
  // Warm-up: the first screenings compile the code paths.
  for (const subject of subjects.slice(0, 50)) index.screen(subject);
  const times: number[] = [];
  let hits = 0;
  const start = process.cpuUsage();
  for (const subject of subjects) {
    const t0 = performance.now();
    hits += index.screen(subject).length;
    times.push(performance.now() - t0);
  }
  const total = cpuMs(start);
  times.sort((a, b) => a - b);
  return {
    label,
    entities: index.size,
    buildMs,
    indexHeapMB: after.heapMB - before.heapMB,
    indexRssMB: after.rssMB - before.rssMB,
    screenings: subjects.length,
    cpuMsPerScreening: total / subjects.length,
    p99Ms: times[Math.floor(times.length * 0.99)] ?? 0,
    hitsPerScreening: hits / subjects.length,
  };
}

function monitoring(subjectCount: number): { entities: number; subjects: number; buildMs: number; cpuSeconds: number; perSecond: number; hits: number } {
  const changed = [...syntheticEntities(100, 7, 'changed')];
  const buildStart = process.cpuUsage();
  const index = new ScreeningIndex(changed);
  const buildMs = cpuMs(buildStart);
  const random = seededRandom(99);
  let hits = 0;
  const start = process.cpuUsage();
  // Subjects are made as they are screened: a million held at once would measure the array.
  for (let i = 0; i < subjectCount; i++) hits += index.screen(syntheticSubject(random)).length;
  const cpuSeconds = cpuMs(start) / 1000;
  return { entities: index.size, subjects: subjectCount, buildMs, cpuSeconds, perSecond: subjectCount / cpuSeconds, hits };
}

function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    process.stderr.write(`${SCRIPT}: --${name} must be a whole number of at least 1, got "${raw}"\n`);
    process.exit(2);
  }
  return value;
}

function main(): void {
  const { values } = parseArgs({ options: { kit: { type: 'string' }, entities: { type: 'string' }, screenings: { type: 'string' }, json: { type: 'boolean' } } });
  const entityCount = positiveInt('entities', values.entities, 1_000_000);
  const screenings = positiveInt('screenings', values.screenings, 2000);
  const random = seededRandom(2026);
  const synthetic = Array.from({ length: screenings }, () => syntheticSubject(random));
  const runs: Run[] = [];

  const kit = screeningKit(SCRIPT, values.kit);
  if (kit !== undefined) {
    // Real names against the real lists: the kit's negatives (misses, the common case) and UN positives (hits).
    const rows = [
      ...readCsvRecords(path.join(kit, 'bench', 'yente', 'validation_report', 'negatives_global.csv')),
      ...readCsvRecords(path.join(kit, 'bench', 'yente', 'positives_un_treated.csv')),
    ];
    const subjects = Array.from({ length: screenings }, (_, i) => subjectOfRow(rows[i % rows.length]!));
    runs.push(measure('official lists (UN + OFAC SDN)', () => [...unEntities(kit), ...ofacEntities(kit)], subjects));
  }
  runs.push(measure(`synthetic list`, () => [...syntheticEntities(entityCount)], synthetic));
  const monitor = monitoring(entityCount);

  const result = { runs, monitoring: monitor };
  if (!values.json) {
    const lines = [
      'screening speed (CPU per screening from process.cpuUsage; memory after GC, index built minus before)',
      'list                            entities   build s   heap MB   RSS MB   screenings   CPU ms/screening   p99 ms   hits/screening',
      ...runs.map(
        (run) =>
          `${run.label.padEnd(31)} ${String(run.entities).padStart(9)} ${(run.buildMs / 1000).toFixed(1).padStart(9)} ${run.indexHeapMB.toFixed(0).padStart(9)} ${run.indexRssMB.toFixed(0).padStart(8)} ${String(run.screenings).padStart(12)} ${run.cpuMsPerScreening.toFixed(3).padStart(18)} ${run.p99Ms.toFixed(2).padStart(8)} ${run.hitsPerScreening.toFixed(2).padStart(16)}`,
      ),
      `monitoring: ${monitor.subjects} subjects against ${monitor.entities} changed entities (index built in ${monitor.buildMs.toFixed(1)} ms): ${monitor.cpuSeconds.toFixed(1)} s CPU, ${Math.round(monitor.perSecond)} subjects/s, ${monitor.hits} hits`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main();
