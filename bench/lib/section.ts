import type { LoadSettings } from './load.js';

export interface BenchContext {
  /** The project root (where package.json is). */
  root: string;
  /** The compiled CLI, `dist/main.js`. */
  vouchMain: string;
  /** The PostgreSQL server to create throwaway databases on. */
  serverUrl: string;
  load: LoadSettings;
  /** How many times each pair of load runs is repeated; results are the median. */
  rounds: number;
}

export interface Target {
  name: string;
  comparison: '>=' | '<=';
  limit: number;
  actual: number;
  met: boolean;
}

export function atLeast(name: string, actual: number, limit: number): Target {
  return { name, comparison: '>=', limit, actual, met: actual >= limit };
}

export function atMost(name: string, actual: number, limit: number): Target {
  return { name, comparison: '<=', limit, actual, met: actual <= limit };
}

export interface Table {
  columns: string[];
  rows: (string | number)[][];
}

export type SectionReport =
  | { section: string; skipped: string }
  | { section: string; table: Table; targets: Target[]; result: Record<string, unknown> };

/** One benchmark: `npm run bench -- <name>` runs it alone. */
export interface Section {
  name: string;
  description: string;
  /** Rounds when `--rounds` is not given (1 unless the section's targets need medians to be read). */
  defaultRounds?: number;
  run(context: BenchContext): Promise<SectionReport>;
}
