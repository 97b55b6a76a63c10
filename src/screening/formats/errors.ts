/**
 * A file that cannot be read as its format. `line` (1-based) names where, when known, and the
 * message then starts with "line N: " ("alt.csv line N: " when the line is in a companion file).
 */
export class ListFormatError extends Error {
  override readonly name = 'ListFormatError';
  readonly line?: number;
  /** The companion file the line is in (ofac-csv's alt.csv, add.csv, sdn_comments.csv); absent for the main file. */
  readonly file?: string;

  constructor(message: string, line?: number, file?: string) {
    const where = line === undefined ? (file ? `${file}: ` : '') : `${file ? `${file} ` : ''}line ${line}: `;
    super(`${where}${message}`);
    if (line !== undefined) this.line = line;
    if (file !== undefined) this.file = file;
  }

  /** The same error, said to be in `file`. */
  inFile(file: string): ListFormatError {
    if (this.file !== undefined) return this;
    const bare = this.line === undefined ? this.message : this.message.slice(`line ${this.line}: `.length);
    return new ListFormatError(bare, this.line, file);
  }
}
