import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './errors.js';

/**
 * What Vouch accepts in a request, decided once at the edge for every route (docs/errors.md):
 * an empty JSON body is `{}`, JSON nests at most MAX_JSON_DEPTH deep, and no text (a JSON body's
 * strings and keys, query strings, path parameters) holds a control character.
 */

/** Objects and arrays inside one another; no request of ours needs more than a handful. */
export const MAX_JSON_DEPTH = 32;

/**
 * C0 controls but tab, line feed and carriage return (free-text fields such as a field agent's
 * notes or a use case come from text areas), DEL and the C1 controls. NUL is the one PostgreSQL
 * refuses outright; the others are refused alike so nothing stores what no form can type.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;

/** Methods whose body an empty one stands for `{}`. */
const WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Whether JSON text nests objects and arrays deeper than `max`, read without parsing (no recursion). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
  return false;
}

/**
 * The name of the first string (or object key) under `value` holding a control character, in the
 * validation messages' form (`applicant.firstname`, `acceptableIdType.1`); undefined when none does.
 * Walks without recursion: the JSON depth limit does not hold for every caller.
 */
export function fieldWithControlCharacter(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length > 0) {
    const [item, path] = stack.pop()!;
    if (typeof item === 'string') {
      if (CONTROL.test(item)) return path || 'value';
    } else if (ArrayBuffer.isView(item)) {
      continue;
    } else if (Array.isArray(item)) {
      item.forEach((element, index) => stack.push([element, path ? `${path}.${index}` : String(index)]));
    } else if (item !== null && typeof item === 'object') {
      for (const [key, element] of Object.entries(item)) {
        const at = path ? `${path}.${key}` : key;
        if (CONTROL.test(key)) return at.replace(CONTROL, '?');
        stack.push([element, at]);
      }
    }
  }
  return undefined;
}

/** Throws the 400 of a request part (`body`, `querystring`, `params`) whose text holds a control character. */
export function refuseControlCharacters(value: unknown, part: 'body' | 'querystring' | 'params'): void {
  const field = fieldWithControlCharacter(value);
  if (field === undefined) return;
  const where = part === 'body' ? field : `${part} ${field}`;
  throw new ApiError('VALIDATION_ERROR', `${where} must not contain control characters (such as NUL); only tab and line breaks are allowed in text`);
}

/** Line breaks of any kind (CR, LF and Unicode's line and paragraph separators; NEL is a control character). */
const LINE_BREAK = /[\r\n\u2028\u2029]/;

/**
 * Whether text that must fit on one line (a name, a title, a street) holds a line break. Such text
 * is written into mails and pages (`Hello ${name},`), where a break would let whoever typed it
 * write paragraphs of their own in Vouch's name.
 */
export function hasLineBreak(text: string): boolean {
  return LINE_BREAK.test(text);
}

/**
 * Control and format characters (Unicode Cc and Cf): bidi overrides, embeddings and isolates
 * (`Kolo`, U+202E, `knab` shows as "Kolobank"), zero-width spaces and joiners, the BOM, the soft
 * hyphen, tag characters. In a name they reorder or hide what a person reads.
 */
const HIDDEN = /[\p{Cc}\p{Cf}]/u;

/** A zero-width joiner between two emoji (woman, joiner, laptop draw one picture): the one format character a name may hold. */
const EMOJI_JOINER = /(?<=\p{Extended_Pictographic}[\u{1F3FB}-\u{1F3FF}\uFE0F]?)\u200D(?=\p{Extended_Pictographic})/gu;

/**
 * Text that draws nothing: white space, default-ignorable code points (U+3164 HANGUL FILLER,
 * U+115F, U+FFA0, variation selectors), combining marks without a letter to sit on, and U+2800
 * BRAILLE PATTERN BLANK, a symbol that fonts draw empty.
 */
const DRAWS_NOTHING = /^[\p{White_Space}\p{Default_Ignorable_Code_Point}\p{M}\u2800]*$/u;

/** A code point as Unicode writes it: `U+202E`. */
function codePoint(character: string): string {
  return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * What is wrong with a name that Vouch writes into its pages and mails (an organization's, a
 * person's, the verification flow's display name), in the validation messages' form; undefined
 * when nothing is. A name is on one line, holds no control or format character, and shows at least
 * one character: otherwise it could pass for another name, or for none.
 */
export function nameProblem(text: string, field: string): string | undefined {
  if (hasLineBreak(text)) return `${field} must be on one line (no line breaks)`;
  const hidden = HIDDEN.exec(text.replace(EMOJI_JOINER, ''));
  if (hidden) return `${field} must not contain invisible or direction-changing characters (${codePoint(hidden[0])})`;
  if (DRAWS_NOTHING.test(text)) return `${field} must contain a visible character, not only blank or invisible ones`;
  return undefined;
}

/** The 400 of a name with a problem (nameProblem), named as the validation messages name fields; the name otherwise. */
export function checkName(text: string, field: string): string {
  const problem = nameProblem(text, field);
  if (problem) throw new ApiError('VALIDATION_ERROR', problem);
  return text;
}

/**
 * What a route reading multipart/form-data throws for a failure of the form's parser: a body it
 * cannot read (no boundary, cut short) is the client's doing, a 400; our own errors pass as they are.
 */
export function unreadableForm(error: unknown): unknown {
  const statusCode = (error as { statusCode?: unknown } | undefined)?.statusCode;
  if (error instanceof ApiError || (typeof statusCode === 'number' && statusCode < 500)) return error;
  return new ApiError('BAD_REQUEST', `The multipart/form-data body could not be read (${(error as Error).message}); send the form whole, with its boundary`);
}

export function registerInputRules(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    // Several clients send `content-type: application/json` with nothing after it.
    if (text.trim() === '') return done(null, {});
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      return done(new ApiError('BAD_REQUEST', `JSON nested too deeply: objects and arrays may be at most ${MAX_JSON_DEPTH} levels deep`), undefined);
    }
    parseJson(request, text, done);
  });

  app.addHook('preValidation', async (request: FastifyRequest) => {
    if (request.body === undefined && WITH_BODY.has(request.method)) request.body = {};
    refuseControlCharacters(request.params, 'params');
    refuseControlCharacters(request.query, 'querystring');
    refuseControlCharacters(request.body, 'body');
  });
}
