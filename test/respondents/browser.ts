/**
 * Just enough of a browser for respondent pages over a real socket: fetch a page, read its one
 * form's fields with their prefilled values (what a browser would send untouched), and submit it
 * as application/x-www-form-urlencoded to the page's own URL (the form has no action).
 */

export interface Page {
  status: number;
  headers: Headers;
  html: string;
  url: string;
}

export async function open(url: string): Promise<Page> {
  const res = await fetch(url, { redirect: 'manual' });
  return { status: res.status, headers: res.headers, html: await res.text(), url };
}

const decode = (value: string) =>
  value.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&#96;/g, '`').replace(/&amp;/g, '&');

function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\s${name}(?:="([^"]*)")?(?=[\\s>])`).exec(tag);
  if (!match) return undefined;
  return decode(match[1] ?? '');
}

/** The fields a browser would send for the page's form as it stands (checked boxes and radios, selected options). */
export function formFields(html: string): Record<string, string> {
  const form = /<form\b[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/.exec(html)?.[1];
  if (form === undefined) throw new Error('the page has no POST form');
  const fields: Record<string, string> = {};
  for (const [tag] of form.matchAll(/<input\b[^>]*>/g)) {
    const name = attribute(tag, 'name');
    if (!name) continue;
    const type = attribute(tag, 'type') ?? 'text';
    if ((type === 'radio' || type === 'checkbox') && attribute(tag, 'checked') === undefined) continue;
    fields[name] = attribute(tag, 'value') ?? (type === 'checkbox' ? 'on' : '');
  }
  for (const [, attrs, body] of form.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/g)) {
    const name = attribute(`<select${attrs}>`, 'name');
    if (!name) continue;
    const options = [...body!.matchAll(/<option\b([^>]*)>([^<]*)<\/option>/g)];
    const chosen = options.find(([, optionAttrs]) => attribute(`<option${optionAttrs}>`, 'selected') !== undefined) ?? options[0];
    if (chosen) fields[name] = attribute(`<option${chosen[1]}>`, 'value') ?? decode(chosen[2]!);
  }
  for (const [, attrs, body] of form.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/g)) {
    const name = attribute(`<textarea${attrs}>`, 'name');
    if (name) fields[name] = decode(body!);
  }
  return fields;
}

/** Fills the page's form (`changes` override what is there; undefined removes a field) and submits it. */
export async function submit(page: Page, changes: Record<string, string | undefined>): Promise<Page> {
  const fields: Record<string, string | undefined> = { ...formFields(page.html), ...changes };
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) body.append(name, value);
  const res = await fetch(page.url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
    redirect: 'manual',
  });
  return { status: res.status, headers: res.headers, html: await res.text(), url: page.url };
}

/** The page's visible text, tags dropped and entities decoded: what a person reads. */
export function textOf(html: string): string {
  const flat = html
    .replace(/<style[\s\S]*?<\/style>/g, '')
    .replace(/<\/?(strong|em|b|i|a|span)\b[^>]*>/g, '')
    .replace(/<[^>]+>/g, ' ');
  return decode(flat).replace(/\s+/g, ' ').trim();
}
