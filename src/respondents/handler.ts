import type { SafeHtml } from './html.js';
import type { RespondentLink } from './links.js';
import type { RespondentKind } from './tables.js';

/** Fields of a submitted form (application/x-www-form-urlencoded), first value of each name. */
export type FormFields = Readonly<Record<string, string>>;

/** A page and its status code; the routes wrap it in the layout (with the test-mode banner when the link is a test one). */
export interface PageResult {
  status: number;
  title: string;
  body: SafeHtml;
}

/**
 * What a kind of respondent sees and submits. The page routes resolve the link (unknown,
 * used, expired) before calling a handler; the handler owns its verification's rules and must
 * consume the link in the transaction that records the answer.
 */
export interface RespondentHandler {
  kind: RespondentKind;
  show(link: RespondentLink): Promise<PageResult>;
  submit(link: RespondentLink, form: FormFields): Promise<PageResult>;
}
