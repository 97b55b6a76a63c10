import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One `curl` of a README example, with the status its comment promises. */
export interface CurlExample {
  /** The comment above it, as written. */
  comment: string;
  /** The status the comment names (a number, or 404 for "not-found"); undefined: any 2xx. */
  status: number | undefined;
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

/** Splits a shell command line into words: single and double quotes, `$NAME` left as written. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      word += line.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === '"') {
      const end = line.indexOf('"', i + 1);
      word += line.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}

function parseCurl(words: string[], comment: string): CurlExample {
  let method: string | undefined;
  let url = '';
  let body: string | undefined;
  const headers: Record<string, string> = {};
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!;
    if (word === '-s') continue;
    if (word === '-X') method = words[++i];
    else if (word === '-H') {
      const header = words[++i]!;
      const colon = header.indexOf(':');
      headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
    } else if (word === '-d') body = words[++i];
    else if (word.startsWith('-')) throw new Error(`README example uses a curl option the test does not know: ${word}`);
    else url = word;
  }
  const named = /\b([2-5]\d\d)\b/.exec(comment)?.[1];
  const status = named ? Number(named) : /not-found/.test(comment) ? 404 : undefined;
  return { comment, status, method: method ?? (body === undefined ? 'GET' : 'POST'), url, headers, body };
}

/** The `curl` commands of a README section (`## Examples`), each with the comment above it. */
export function readmeCurls(section = 'Examples'): CurlExample[] {
  const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
  const start = readme.indexOf(`\n## ${section}\n`);
  if (start < 0) throw new Error(`README has no section ${section}`);
  const end = readme.indexOf('\n## ', start + 1);
  const text = readme.slice(start, end < 0 ? undefined : end);
  const out: CurlExample[] = [];
  for (const block of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
    let comment = '';
    for (const line of block[1]!.replace(/\\\n\s*/g, ' ').split('\n')) {
      if (line.startsWith('#')) comment = line.slice(1).trim();
      else if (line.trim().startsWith('curl ')) out.push(parseCurl(shellWords(line.trim()), comment));
    }
  }
  return out;
}
