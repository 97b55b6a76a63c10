import { CsvError } from 'csv-parse';
import { parse } from 'csv-parse/sync';
import { ListFormatError } from './errors.js';

/**
 * The CSV formats' common reader: csv-parse over the bytes, each record handed to `onRecord` as
 * it is parsed and not kept (a million-row file is never a million arrays at once), with the
 * line the record starts on. csv-parse's own errors (a quote never closed: a truncated file)
 * become ListFormatErrors naming the line. Field counts are the caller's to check: each format
 * says what it expects. (csv-parse's stream interface measured 1.7× slower on OFAC's add.csv
 * for no gain: the bytes are in memory already.)
 */
export interface CsvOptions {
  /** Lines to pass over before the records (the UK file's "Report Date" line). */
  fromLine?: number;
  /** Trim spaces around unquoted fields (OFAC writes `-0- `). */
  trim?: boolean;
}

export type OnRecord = (fields: string[], line: number) => void;

export function readCsv(bytes: Buffer, options: CsvOptions, onRecord: OnRecord): void {
  const fromLine = options.fromLine ?? 1;
  let previousEnd = fromLine - 1;
  try {
    parse(bytes, {
      bom: true,
      relax_column_count: true,
      skip_empty_lines: true,
      from_line: fromLine,
      trim: options.trim ?? false,
      on_record: (record: string[], context) => {
        const end = context.lines;
        // A record spans lines when a quoted field holds line breaks; errors name its first.
        const start = Math.min(previousEnd + 1, end);
        previousEnd = end;
        onRecord(record, start);
        return null;
      },
    });
  } catch (err) {
    throw csvError(err);
  }
}

function csvError(err: unknown): unknown {
  if (!(err instanceof CsvError)) return err;
  const line = typeof err.lines === 'number' ? err.lines : undefined;
  if (err.code === 'CSV_QUOTE_NOT_CLOSED') {
    return new ListFormatError('a quoted field is never closed: the file is truncated or not CSV', line);
  }
  return new ListFormatError(`not valid CSV: ${err.message}`, line);
}
