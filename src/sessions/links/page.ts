import { createHash } from 'node:crypto';
import { html, SafeHtml } from '../../respondents/html.js';
import { ID_TYPE_RULES } from '../input.js';
import type { LinkRow } from './tables.js';
import type { VisitOutcome } from './service.js';

/**
 * The pages of a verification link (/l/<code>): plain HTML, no script, one inline style allowed by
 * its hash. The link's page only shows what will happen and a "Start verification" button (a
 * form POST): link previews and crawlers that fetch it start nothing.
 */

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:#1b1f24;background:#f4f5f7}
main{max-width:34rem;margin:0 auto;padding:1.25rem 1rem 3rem}
.card{background:#fff;border:1px solid #dde1e6;border-radius:10px;padding:1.25rem;margin-bottom:1rem}
h1{font-size:1.4rem;line-height:1.25;margin:0 0 .75rem}
p{margin:.5rem 0}
ul{padding-left:1.2rem}
button{display:block;width:100%;font:inherit;font-weight:600;padding:.85rem;margin-top:1.25rem;border:0;border-radius:8px;background:#0b6e4f;color:#fff;cursor:pointer}
.muted{color:#57606a;font-size:.9rem}
.test-mode{border:2px solid #bc4c00;background:#fff8c5}
`;

export const LINK_STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

export interface LinkPage {
  status: number;
  title: string;
  body: SafeHtml;
}

export function layout(page: LinkPage, testMode: boolean): string {
  const title = testMode ? `TEST MODE · ${page.title}` : page.title;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${title} · Vouch</title>
<style>${new SafeHtml(STYLE)}</style>
</head>
<body><main>
${
  testMode
    ? html`<div class="card test-mode" role="note"><p><strong>TEST MODE.</strong> This link belongs to an organization trying Vouch out: nothing is checked against real records. Do not enter real ID numbers.</p></div>`
    : ''
}
${page.body}
<p class="muted">Verification by Vouch on behalf of the organization named above.</p>
</main></body>
</html>
`.value;
}

function idTypesText(link: LinkRow): string {
  const names = link.id_types.map((type) => ID_TYPE_RULES[type].label);
  return names.length === 1 ? names[0]! : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/** The link's page while it can start sessions: what is needed, and the one button. */
export function startPage(link: LinkRow, orgName: string, action: string): LinkPage {
  const needs = [html`<li>One of these IDs: ${idTypesText(link)}</li>`];
  if (link.check_liveness) needs.push(html`<li>A phone or computer with a camera, for a short selfie video</li>`);
  return {
    status: 200,
    title: `Verify your identity for ${orgName}`,
    body: html`<div class="card">
<h1>Verify your identity for ${orgName}</h1>
<p>${orgName} asks you to confirm who you are. It takes about two minutes. You will need:</p>
<ul>${needs}</ul>
<p>You will be told what is collected and why, and asked for your consent, before anything is checked.</p>
<form method="post" action="${action}">
<button type="submit">Start verification</button>
</form>
</div>`,
  };
}

function closedPage(status: number, title: string, text: string): LinkPage {
  return { status, title, body: html`<div class="card" role="alert"><h1>${title}</h1><p>${text}</p></div>` };
}

export function notFoundPage(): LinkPage {
  return closedPage(404, 'This verification link does not exist', 'Check that the link was copied in full, or ask whoever sent it to you for a new one.');
}

/** What a visitor sees when the link cannot start a session now; no session was created. */
export function unavailablePage(outcome: Exclude<VisitOutcome, { kind: 'started' }>): LinkPage {
  if (outcome.reason === 'unknown') return notFoundPage();
  const org = outcome.orgName;
  switch (outcome.reason) {
    case 'disabled':
      return closedPage(410, 'This verification link has been turned off', `${org} has turned this link off. Ask ${org} for a new link if you still need to verify.`);
    case 'expired':
      return closedPage(
        410,
        'This verification link has expired',
        `This link stopped working on ${outcome.link.expires_at.toUTCString().replace(' GMT', ' UTC')}. Ask ${org} for a new link if you still need to verify.`,
      );
    case 'full':
    case 'spent':
      return closedPage(410, 'This verification link has been used up', `This link has started as many verifications as ${org} allowed. Ask ${org} for a new link if you still need to verify.`);
    case 'active':
    case 'organization':
    case 'payment':
    case 'settings':
      return closedPage(503, 'Verification is not available right now', `${org} cannot start verifications through this link at the moment. Please try again later or contact ${org}.`);
  }
}

export function tooManyPage(retryAfterSeconds: number): LinkPage {
  const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
  return closedPage(429, 'Too many tries', `This link was started too many times from your network. Please wait ${minutes} minute${minutes === 1 ? '' : 's'} and try again.`);
}

export function foreignFormPage(): LinkPage {
  return closedPage(403, 'Open the link itself to start', 'This verification can only be started from its own page. Open the link you were given and press "Start verification".');
}

export function badRequestPage(status: number): LinkPage {
  return closedPage(status, 'This request could not be understood', 'Open the link you were given and press "Start verification".');
}

export function errorPage(): LinkPage {
  return closedPage(500, 'Something went wrong', 'The verification could not be started. Please try again in a few minutes.');
}
