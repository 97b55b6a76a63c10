/**
 * `npx tsx bench/screening-accuracy.ts [--kit DIR] [--json] [--quick]`
 *
 * The name matcher's accuracy on the screening data kit (../shared/screening), per set, with counts:
 * 1. nomenklatura's hand-labelled name pairs: precision, recall and F1 of compareNames at the
 *    default threshold and at others, beside OpenSanctions' logic-v2 scores on the same pairs;
 * 2. yente's UN fixtures against the UN list: recall of the expected entry among the hits of the
 *    clean and the perturbed positives, and the share of synthetic negatives (and of US Congress
 *    members, an over-matching check) raising any hit;
 * 3. watchman's cross-script pairs (reported, no target).
 * `--quick` screens the 1,000-row negative samples instead of the 50,000-row sets.
 * Skips in one line, exit 0, when the kit is absent.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { EntitySchema } from '../src/screening/entity.js';
import { compareNames, DEFAULT_THRESHOLD, ScreeningIndex } from '../src/screening/matching/index.js';
import { readCsvRecords, screeningKit, subjectOfRow, unEntities } from './lib/screening-kit.js';

const SCRIPT = 'screening-accuracy';
const THRESHOLDS = [0.65, 0.7, 0.75, 0.8, 0.85, 0.9];

interface Confusion {
  threshold: number;
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  precision: number;
  recall: number;
  f1: number;
}

function confusion(scored: { score: number; match: boolean }[], threshold: number): Confusion {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let tn = 0;
  for (const { score, match } of scored) {
    const hit = score >= threshold;
    if (hit && match) tp++;
    else if (hit) fp++;
    else if (match) fn++;
    else tn++;
  }
  const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 0 : tp / (tp + fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { threshold, tp, fp, fn, tn, precision, recall, f1 };
}

const SCHEMAS: Record<string, EntitySchema | undefined> = { Person: 'Person', Company: 'Organization', Organization: 'Organization', LegalEntity: 'Organization' };

function nameBench(kit: string, printErrors: boolean) {
  const rows = readCsvRecords(path.join(kit, 'bench', 'nomenklatura', 'cases.csv'));
  const scored: { score: number; match: boolean; row: Record<string, string> }[] = [];
  let skipped = 0;
  for (const row of rows) {
    const schema = SCHEMAS[row.schema ?? ''];
    if (!schema) {
      skipped++;
      continue;
    }
    scored.push({ score: compareNames(row.name1!, row.name2!, schema), match: row.is_match === 'true', row });
  }
  if (printErrors) {
    for (const { score, match, row } of scored) {
      if (score >= DEFAULT_THRESHOLD !== match) process.stdout.write(`  ${match ? 'FN' : 'FP'} ${score.toFixed(3)} ${row.schema} ${row.name1} | ${row.name2}\n`);
    }
  }
  const logic = readCsvRecords(path.join(kit, 'bench', 'nomenklatura', 'logicv2-frozen.csv'))
    .filter((row) => SCHEMAS[row.schema ?? ''])
    .map((row) => ({ score: Number(row.score), match: row.is_match === 'true' }));
  return {
    pairs: scored.length,
    skippedVessels: skipped,
    atDefault: confusion(scored, DEFAULT_THRESHOLD),
    sweep: THRESHOLDS.map((threshold) => confusion(scored, threshold)),
    logicV2: { pairs: logic.length, at070: confusion(logic, 0.7) },
  };
}

function key(name: string): string {
  return name.toUpperCase().replace(/\s+/g, ' ').trim();
}

function unBench(kit: string, quick: boolean, printErrors: boolean) {
  const entities = unEntities(kit);
  const index = new ScreeningIndex(entities);
  const byName = new Map<string, string>();
  for (const entity of entities) if (entity.schema === 'Person') byName.set(key(entity.name), entity.id);
  const yente = path.join(kit, 'bench', 'yente');
  const untreated = readCsvRecords(path.join(yente, 'positives_un_untreated.csv'));
  const treated = readCsvRecords(path.join(yente, 'positives_un_treated.csv'));

  const recall = (rows: Record<string, string>[], label: string) => {
    let expected = 0;
    let found = 0;
    let withoutEntry = 0;
    rows.forEach((row, i) => {
      const id = byName.get(key(untreated[i]!.full_name ?? ''));
      if (id === undefined) {
        withoutEntry++;
        return;
      }
      expected++;
      const hits = index.screen(subjectOfRow(row));
      if (hits.some((hit) => hit.entity.id === id)) found++;
      else if (printErrors) process.stdout.write(`  miss ${label}: ${row.full_name} (${row.date_of_birth}) → ${id} ${entities.find((e) => e.id === id)?.name}\n`);
    });
    return { rows: rows.length, withoutEntry, expected, found, recall: expected === 0 ? 0 : found / expected };
  };

  const falseAlerts = (file: string) => {
    const rows = readCsvRecords(path.join(yente, file));
    let alerted = 0;
    for (const row of rows) {
      const hits = index.screen(subjectOfRow(row));
      if (hits.length > 0) {
        alerted++;
        if (printErrors) process.stdout.write(`  alert ${file}: ${row.full_name} (${row.date_of_birth}, ${row.nationality}) → ${hits[0]!.matchedName} ${hits[0]!.score}\n`);
      }
    }
    return { file, rows: rows.length, alerted, rate: rows.length === 0 ? 0 : alerted / rows.length };
  };

  const negatives = quick ? ['validation_report/negatives_global.csv', 'validation_report/negatives_us.csv'] : ['negatives_global.csv', 'negatives_us.csv'];
  return {
    entities: index.size,
    untreated: recall(untreated, 'untreated'),
    treated: recall(treated, 'treated'),
    negatives: negatives.map(falseAlerts),
    congress: falseAlerts('positives_us_congress_untreated.csv'),
  };
}

function crossScript(kit: string) {
  // Its header is a comment line: the columns are named here.
  const rows = readCsvRecords(path.join(kit, 'bench', 'watchman', 'cross_script_pairs.csv'), ['Query', 'Expected Match', 'Min Score', 'Description']);
  const pairs = rows.map((row) => ({ query: row.Query!, expected: row['Expected Match']!, score: compareNames(row.Query!, row['Expected Match']!, 'Person') }));
  return { pairs: pairs.length, atDefault: pairs.filter((pair) => pair.score >= DEFAULT_THRESHOLD).length, scores: pairs };
}

function pct(value: number): string {
  return `${(value * 100).toFixed(2)} %`;
}

function main(): void {
  const { values } = parseArgs({ options: { kit: { type: 'string' }, json: { type: 'boolean' }, quick: { type: 'boolean' }, errors: { type: 'boolean' } } });
  const kit = screeningKit(SCRIPT, values.kit);
  if (kit === undefined) return;
  const printErrors = values.errors === true;
  const names = nameBench(kit, printErrors);
  const un = unBench(kit, values.quick === true, printErrors);
  const scripts = crossScript(kit);
  const result = { threshold: DEFAULT_THRESHOLD, nomenklatura: names, un, crossScript: scripts };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  const out: string[] = [];
  const d = names.atDefault;
  out.push(`screening accuracy (default threshold ${DEFAULT_THRESHOLD})`);
  out.push(`nomenklatura name pairs: ${names.pairs} (${names.skippedVessels} vessel rows skipped)`);
  out.push(`  at ${d.threshold}: precision ${d.precision.toFixed(3)} recall ${d.recall.toFixed(3)} F1 ${d.f1.toFixed(3)} (TP ${d.tp} FP ${d.fp} FN ${d.fn} TN ${d.tn})`);
  for (const c of names.sweep) out.push(`  at ${c.threshold.toFixed(2)}: P ${c.precision.toFixed(3)} R ${c.recall.toFixed(3)} F1 ${c.f1.toFixed(3)} (TP ${c.tp} FP ${c.fp} FN ${c.fn})`);
  const l = names.logicV2.at070;
  out.push(`  logic-v2 (frozen scores, ${names.logicV2.pairs} pairs) at 0.70: P ${l.precision.toFixed(3)} R ${l.recall.toFixed(3)} F1 ${l.f1.toFixed(3)}`);
  out.push(`UN list: ${un.entities} entities`);
  for (const [label, r] of [['untreated', un.untreated], ['treated', un.treated]] as const) {
    out.push(`  positives ${label}: ${r.found} of ${r.expected} found (${pct(r.recall)}); ${r.withoutEntry} rows name no UN primary name`);
  }
  for (const n of [...un.negatives, un.congress]) out.push(`  ${n.file}: ${n.alerted} of ${n.rows} raised a hit (${pct(n.rate)})`);
  out.push(`cross-script pairs: ${scripts.atDefault} of ${scripts.pairs} at or above ${DEFAULT_THRESHOLD}`);
  for (const pair of scripts.scores) out.push(`  ${pair.score.toFixed(3)}  ${pair.query} / ${pair.expected}`);
  process.stdout.write(`${out.join('\n')}\n${JSON.stringify(result, (k, v) => (k === 'scores' ? undefined : v))}\n`);
}

main();
