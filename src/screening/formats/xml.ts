import { SaxesParser } from 'saxes';
import { ListFormatError } from './errors.js';
import { isBlank } from './bytes.js';

/**
 * The XML formats' common reader: one pass of saxes over the bytes, fed in chunks so a large
 * file is never one string, with the element path and line numbers the readers need.
 *
 * - `open(name, attributes, line)` for each start tag below the root;
 * - `close(name, text)` for each end tag below the root, `text` being the element's own text
 *   since its start tag (what a leaf element holds);
 * - the root must be `root.name` (and, when it declares a default namespace, `root.namespace`),
 *   else the file is not of this format and the error says which format was expected.
 *
 * Not well-formed XML, a missing root and an unclosed root (a truncated download) are
 * ListFormatErrors naming the line.
 */
export interface XmlReader {
  open(name: string, attributes: Record<string, string>, line: number): void;
  close(name: string, text: string, line: number): void;
}

export interface XmlRoot {
  name: string;
  namespace?: string;
  /** What the format is, for "expected ..." messages: "a UN consolidated list (un-xml)". */
  expected: string;
}

const CHUNK_BYTES = 1 << 20;
// saxes prefixes its messages with "line:column: ".
const SAXES_POSITION = /^\d+:\d+:\s*/;

export function readXml(bytes: Buffer, root: XmlRoot, reader: XmlReader): void {
  const parser = new SaxesParser({ position: true });
  let depth = 0;
  let sawRoot = false;
  let text = '';
  const openTags: string[] = [];

  parser.on('opentag', (tag) => {
    if (depth === 0) {
      if (sawRoot) throw new ListFormatError(`a second root element <${tag.name}>: ${root.expected} has one <${root.name}>`, parser.line);
      sawRoot = true;
      if (tag.name !== root.name) {
        throw new ListFormatError(`expected ${root.expected} (root element <${root.name}>), found <${tag.name}>`, parser.line);
      }
      const namespace = tag.attributes.xmlns;
      if (root.namespace !== undefined && namespace !== undefined && namespace !== root.namespace) {
        throw new ListFormatError(`expected ${root.expected} (namespace ${root.namespace}), found namespace ${namespace}`, parser.line);
      }
    } else {
      reader.open(tag.name, tag.attributes as Record<string, string>, parser.line);
    }
    openTags.push(tag.name);
    depth++;
    text = '';
  });
  parser.on('text', (chunk) => {
    text += chunk;
  });
  parser.on('cdata', (chunk) => {
    text += chunk;
  });
  parser.on('closetag', (tag) => {
    depth--;
    openTags.pop();
    if (depth > 0) reader.close(tag.name, text, parser.line);
    text = '';
  });

  if (isBlank(bytes)) throw new ListFormatError(`the file is empty: expected ${root.expected}`);
  const decoder = new TextDecoder('utf-8');
  try {
    for (let offset = 0; offset < bytes.length; offset += CHUNK_BYTES) {
      const end = Math.min(offset + CHUNK_BYTES, bytes.length);
      parser.write(decoder.decode(bytes.subarray(offset, end), { stream: end < bytes.length }));
    }
    if (depth > 0) {
      throw new ListFormatError(`the file ends inside <${openTags[openTags.length - 1]}>, before </${root.name}>: it is truncated`, parser.line);
    }
    parser.close();
  } catch (err) {
    if (err instanceof ListFormatError) throw err;
    const message = err instanceof Error ? err.message.replace(SAXES_POSITION, '') : String(err);
    if (!sawRoot) throw new ListFormatError(`not ${root.expected}: ${message}`, parser.line);
    throw new ListFormatError(`not well-formed XML: ${message}`, parser.line);
  }
  if (!sawRoot) throw new ListFormatError(`the file is empty: expected ${root.expected}`);
}
