/** A file that cannot be read as its format. `line` (1-based) names where, when known; the message then starts with "line N: ". */
export class ListFormatError extends Error {
  override readonly name = 'ListFormatError';
  readonly line?: number;

  constructor(message: string, line?: number) {
    super(line === undefined ? message : `line ${line}: ${message}`);
    if (line !== undefined) this.line = line;
  }
}
