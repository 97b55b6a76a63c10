import fs from 'node:fs';
import type { Command } from 'commander';
import { CliError, print, withDatabase } from '../../cli/support.js';
import { importRegistry, type ImportProgress } from './import.js';

/** `vouch registry import FILE`: the live registry's records from JSONL (docs/registry.md). */
export function registerRegistryCommands(program: Command): void {
  program
    .command('registry')
    .description('the live identity registry')
    .command('import <file>')
    .description('load identity records (JSONL) for live mode; `-` reads standard input; safe to run again')
    .option('--json', 'print JSON')
    .option('--progress', 'print progress on stderr every second, even when stderr is not a terminal')
    .option('--no-progress', 'print no progress, even on a terminal')
    .action(async (file: string, opts: { json?: boolean; progress?: boolean }) => {
      if (file !== '-' && !fs.existsSync(file)) throw new CliError(`no such file: ${file}`);
      await withDatabase(async ({ db }) => {
        const input = file === '-' ? process.stdin : fs.createReadStream(file);
        const progress = progressPrinter(process.stderr, opts.progress ?? process.stderr.isTTY === true);
        const result = await importRegistry(db, input, { onProgress: progress?.update }).finally(() => progress?.end());
        for (const error of result.errors) process.stderr.write(`rejected line ${error.line}: ${error.message}\n`);
        if (result.rejected > result.errors.length) process.stderr.write(`… and ${result.rejected - result.errors.length} more rejected lines\n`);
        const { errors: _errors, ...summary } = result;
        const human = `imported ${result.imported} (${result.new} new, ${result.updated} updated, ${result.unchanged} unchanged), rejected ${result.rejected}`;
        print(!!opts.json, summary, human);
      }, { wholeTables: true });
    });
}

/**
 * Progress on stderr, never stdout (which `--json` keeps for its one document): counts and a
 * rate, no record content. A terminal gets one line rewritten in place; anything else (a log
 * file, a CI job) a line a tick.
 */
function progressPrinter(stream: NodeJS.WriteStream, enabled: boolean) {
  if (!enabled) return undefined;
  const inPlace = stream.isTTY === true;
  let shown = false;
  return {
    update(progress: ImportProgress) {
      const seconds = progress.elapsedMs / 1000;
      const rate = seconds > 0 ? Math.round(progress.read / seconds) : 0;
      const text = `registry import: ${progress.read} read, ${progress.imported} imported, ${progress.rejected} rejected, ${rate} records/s`;
      stream.write(inPlace ? `\r${text}\x1b[K` : `${text}\n`);
      shown = true;
    },
    end() {
      if (inPlace && shown) stream.write('\n');
    },
  };
}
