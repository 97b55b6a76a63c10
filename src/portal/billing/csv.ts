/**
 * One CSV cell (RFC 4180): quoted when it holds a comma, quote or line break. A text cell that
 * starts like a formula (= + - @, or a tab or carriage return before one) gets a leading
 * apostrophe, so a spreadsheet shows it as text instead of running it (CSV injection). Numbers,
 * negative ones included, are written as they are: a number cannot be a formula.
 */
export function csvCell(value: string | number): string {
  if (typeof value === 'number' || /^-?\d+(\.\d+)?$/.test(value)) return String(value);
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** One record, CRLF-terminated as RFC 4180 says. */
export function csvRow(values: readonly (string | number)[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

/** Kobo as naira with two decimals and no grouping ("-1234.50"), for spreadsheets to sum. */
export function naira(kobo: number): string {
  const sign = kobo < 0 ? '-' : '';
  const abs = Math.abs(kobo);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}
