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
  let previousRaw = fromLine - 1;
  // csv-parse counts a CRLF inside a quoted field as two lines: what it has over-counted so far.
  let drift = 0;
  try {
    parse(bytes, {
      bom: true,
      relax_column_count: true,
      skip_empty_lines: true,
      from_line: fromLine,
      trim: options.trim ?? false,
      on_record: (record: string[], context) => {
        const raw = context.lines;
        let start = raw - drift;
        // A record spans lines when a quoted field holds line breaks: errors name its first.
        // (Blank lines before it are skipped, so the previous record's end does not say.)
        if (raw - previousRaw > 1) {
          const { breaks, crlf } = lineBreaks(record);
          drift += crlf;
          start = raw - drift - breaks;
        }
        previousRaw = raw;
        onRecord(record, start);
        return null;
      },
    });
  } catch (err) {
    throw csvError(err, drift);
  }
}

function lineBreaks(fields: string[]): { breaks: number; crlf: number } {
  let breaks = 0;
  let crlf = 0;
  for (const field of fields) {
    for (let at = field.indexOf('\n'); at >= 0; at = field.indexOf('\n', at + 1)) {
      breaks++;
      if (at > 0 && field.charCodeAt(at - 1) === 0x0d) crlf++;
    }
  }
  return { breaks, crlf };
}

function csvError(err: unknown, drift: number): unknown {
  if (!(err instanceof CsvError)) return err;
  const line = typeof err.lines === 'number' ? err.lines - drift : undefined;
  if (err.code === 'CSV_QUOTE_NOT_CLOSED') {
    return new ListFormatError('a quoted field is never closed: the file is truncated or not CSV', line);
  }
  return new ListFormatError(`not valid CSV: ${err.message}`, line);
}
