import { html, type SafeHtml } from './html.js';
import type { PageResult } from './handler.js';

/** The pages every respondent may meet whatever they were asked; none of them ever shows a stack. */

function simple(status: number, title: string, body: SafeHtml): PageResult {
  return { status, title, body: html`<div class="card"><h1>${title}</h1>${body}</div>` };
}

export function unknownLinkPage(): PageResult {
  return simple(
    404,
    'This link is not valid',
    html`<p>We could not find this request. Check that you opened the whole link from your message; links are long and some apps cut them.</p>`,
  );
}

export function usedLinkPage(): PageResult {
  return simple(
    410,
    'This request has already been answered',
    html`<p>An answer was already given through this link, and each link works only once. Nothing more is needed from you.</p>
<p>If you did not answer it yourself, tell the organization that asked you.</p>`,
  );
}

export function expiredLinkPage(expiredAt: Date): PageResult {
  return simple(
    410,
    'This link has expired',
    html`<p>This request expired on ${formatDay(expiredAt)}. If you still want to answer, ask the organization that contacted you to send a new request.</p>`,
  );
}

export function withdrawnPage(): PageResult {
  return simple(410, 'This request was withdrawn', html`<p>The organization that asked you has cancelled this request. Nothing more is needed from you.</p>`);
}

export function closedPage(): PageResult {
  return simple(410, 'This request is closed', html`<p>This request has already been completed. Nothing more is needed from you.</p>`);
}

export function thanksPage(title: string, message: string): PageResult {
  return simple(200, title, html`<p>${message}</p><p>You can close this page.</p>`);
}

export function badRequestPage(status: number): PageResult {
  return simple(
    status,
    'We could not read your answer',
    html`<p>Your browser sent something we did not understand. Go back to the page from your message, and submit the form again.</p>`,
  );
}

export function errorPage(): PageResult {
  return simple(
    500,
    'Something went wrong',
    html`<p>Sorry, something went wrong on our side and your answer may not have been saved. Please try again in a few minutes using the same link.</p>`,
  );
}

export function notFoundPage(): PageResult {
  return simple(404, 'Page not found', html`<p>There is no page at this address. Open the link from your message again.</p>`);
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** "14 March 2026" (UTC): unambiguous for readers used to day-month or month-day order. */
export function formatDay(date: Date): string {
  return `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
}
