import fs from 'node:fs';
import path from 'node:path';
import { lastJsonLine, runCommand } from '../lib/processes.js';
import { atLeast, type Section } from '../lib/section.js';

const SCRIPT = 'bench/registry-import.ts';
const TARGET_RECORDS_PER_SECOND = 50_000;

interface ImportResult {
  records: number;
  seconds: number;
  recordsPerSecond: number;
  rerunSeconds: number;
  rerunRecordsPerSecond: number;
}

export const registryImport: Section = {
  name: 'registry-import',
  description: `\`vouch registry import\` throughput on PostgreSQL, measured by ${SCRIPT} in its own throwaway database`,
  async run(context) {
    const script = path.join(context.root, SCRIPT);
    if (!fs.existsSync(script)) return { section: this.name, skipped: `${SCRIPT} is not there yet` };
    const stdout = await runCommand(process.execPath, ['--import', 'tsx', script], { cwd: context.root, env: { DATABASE_URL: context.serverUrl } });
    const result = lastJsonLine<ImportResult>(stdout);
    return {
      section: this.name,
      table: {
        columns: ['run', 'records', 'seconds', 'records/s'],
        rows: [
          ['first load', result.records, result.seconds, result.recordsPerSecond],
          ['re-run, all unchanged', result.records, result.rerunSeconds, result.rerunRecordsPerSecond],
        ],
      },
      targets: [atLeast('records/s', result.recordsPerSecond, TARGET_RECORDS_PER_SECOND)],
      result: { ...result },
    };
  },
};
