import fs from 'node:fs';
import type { Command } from 'commander';
import { CliError, print, withDatabase } from '../../cli/support.js';
import { importRegistry, type ImportProgress, type ImportResult } from './import.js';
import { notFound } from '../../platform/not-found.js';

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
    .option('--no-check-photos', 'store photos without looking for a face in them (faster bulk loads; docs/registry.md)')
    .action(async (file: string, opts: { json?: boolean; progress?: boolean; checkPhotos: boolean }) => {
      if (file !== '-' && !fs.existsSync(file)) throw notFound(new CliError(`no such file: ${file}`));
      // Loaded here, not with the CLI: every other command starts without the face engine's code.
      // Its model starts with the first photo, so a file without photos never loads it.
      const engine = opts.checkPhotos ? (await import('../biometrics/face-engine.js')).sharedFaceEngine() : undefined;
      await withDatabase(async ({ db }) => {
        const input = file === '-' ? process.stdin : fs.createReadStream(file);
        const progress = progressPrinter(process.stderr, opts.progress ?? process.stderr.isTTY === true);
        const result = await importRegistry(db, input, { onProgress: progress?.update, checkPhotos: engine && { engine } }).finally(() => progress?.end());
        for (const error of result.errors) process.stderr.write(`rejected line ${error.line}: ${error.message}\n`);
        if (result.rejected > result.errors.length) process.stderr.write(`… and ${result.rejected - result.errors.length} more rejected lines\n`);
        const { photos } = result;
        for (const problem of photos.problems) process.stderr.write(`line ${problem.line}: ${problem.message}\n`);
        const reported = photos.noFace + photos.unreadable;
        if (reported > photos.problems.length) process.stderr.write(`… and ${reported - photos.problems.length} more lines whose photo shows no face or is no image\n`);
        const { errors: _errors, photos: { problems: _problems, ...photoCounts }, ...counts } = result;
        const human = `imported ${result.imported} (${result.new} new, ${result.updated} updated, ${result.unchanged} unchanged), rejected ${result.rejected}${photoSummary(photos)}`;
        print(!!opts.json, { ...counts, photos: photoCounts }, human);
      }, { wholeTables: true });
    });
}

/** The photo part of the summary; nothing for a file without photos. */
function photoSummary(photos: ImportResult['photos']): string {
  const parts: string[] = [];
  if (photos.checked > 0) parts.push(`${photos.checked} checked, ${photos.noFace} without a face, ${photos.unreadable} unreadable`);
  if (photos.unchecked > 0) parts.push(`${photos.unchecked} not checked`);
  return parts.length > 0 ? `; photos: ${parts.join(', ')}` : '';
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
      const text = `registry import: ${progress.read} read, ${progress.imported} imported, ${progress.rejected} rejected, ${rate} records/s${photoProgress(progress.photos)}`;
      stream.write(inPlace ? `\r${text}\x1b[K` : `${text}\n`);
      shown = true;
    },
    end() {
      if (inPlace && shown) stream.write('\n');
    },
  };
}

/** The photo check's part of a progress line, once a photo has been read. */
function photoProgress(photos: ImportProgress['photos']): string {
  if (!photos || photos.checked + photos.waiting === 0) return '';
  return `; photos: ${photos.checked} checked (${photos.noFace} without a face, ${photos.unreadable} unreadable), ${photos.waiting} waiting`;
}
