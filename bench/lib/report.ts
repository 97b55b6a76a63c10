import type { SectionReport, Table, Target } from './section.js';

function cell(value: string | number): string {
  if (typeof value === 'string') return value;
  return Number.isInteger(value) ? String(value) : value.toFixed(value < 10 ? 2 : 1);
}

export function formatTable(table: Table): string {
  const cells = [table.columns, ...table.rows.map((row) => row.map(cell))];
  const widths = table.columns.map((_, i) => Math.max(...cells.map((row) => row[i]?.length ?? 0)));
  const line = (row: string[]) => row.map((value, i) => (i === 0 ? value.padEnd(widths[i]!) : value.padStart(widths[i]!))).join('  ');
  return [line(cells[0]!), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

export function formatTargets(targets: Target[]): string {
  return targets
    .map((target) => `  ${target.met ? 'met   ' : 'MISSED'}  ${target.name} ${target.comparison} ${target.limit} (measured ${cell(target.actual)})`)
    .join('\n');
}

export function formatSection(report: SectionReport): string {
  if ('skipped' in report) return `== ${report.section}: skipped (${report.skipped})`;
  return [`== ${report.section}`, formatTable(report.table), 'targets:', formatTargets(report.targets)].join('\n');
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * The value at `fraction` (0 to 1) of values sorted ascending, by nearest rank: the smallest value
 * that at least `fraction` of them do not exceed (the element at ⌈fraction × n⌉ − 1; the first for
 * 0); 0 when there are none. Every percentile the benchmarks report.
 */
export function quantile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] ?? 0;
}

export function round(value: number, places = 2): number {
  return Number(value.toFixed(places));
}
