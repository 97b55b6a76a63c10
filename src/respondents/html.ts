import { createHash } from 'node:crypto';

/**
 * HTML for respondent pages and emails, escaped by construction: every value interpolated into
 * an `html` template is escaped unless it is itself `SafeHtml` (the result of another template),
 * so user data (names, titles, comments) cannot become markup.
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"'`]/g, (char) => ESCAPES[char]!);
}

type Interpolation = SafeHtml | string | number | boolean | null | undefined | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += render(value) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

// System fonts, one column, large touch targets: readable on a small phone without zooming.
const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;color:#1b1f24;background:#f4f5f7}
main{max-width:34rem;margin:0 auto;padding:1.25rem 1rem 3rem}
.card{background:#fff;border:1px solid #dde1e6;border-radius:10px;padding:1.25rem;margin-bottom:1rem}
h1{font-size:1.4rem;line-height:1.25;margin:0 0 .75rem}
h2{font-size:1.1rem;margin:1.25rem 0 .5rem}
p{margin:.5rem 0}
label{display:block;font-weight:600;margin:.9rem 0 .3rem}
.hint{display:block;font-weight:400;color:#57606a;font-size:.9rem}
input[type=text],input[type=email],input[type=tel],input[type=date],select,textarea{width:100%;font:inherit;padding:.65rem .7rem;border:1px solid #8c959f;border-radius:6px;background:#fff}
textarea{min-height:5rem}
fieldset{border:1px solid #dde1e6;border-radius:8px;margin:1rem 0;padding:.5rem .9rem .9rem}
legend{font-weight:600;padding:0 .3rem}
.choice{display:flex;gap:.6rem;align-items:flex-start;font-weight:400;margin:.6rem 0}
.choice input{width:1.3rem;height:1.3rem;margin-top:.1rem;flex:none}
button{display:block;width:100%;font:inherit;font-weight:600;padding:.85rem;margin-top:1.25rem;border:0;border-radius:8px;background:#0b6e4f;color:#fff}
.errors{border-color:#cf222e;background:#fff5f5}
.errors li{color:#a40e26}
.muted{color:#57606a;font-size:.9rem}
.test-mode{border:2px solid #bc4c00;background:#fff8c5}
.test-mode h2{margin-top:0;color:#953800}
dl{margin:.5rem 0}dt{font-weight:600}dd{margin:0 0 .5rem}
`;

/** For the Content-Security-Policy: the one inline style block is allowed by its hash, nothing else runs. */
export const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

/**
 * A test-mode link's banner: the request was made with an organization's test secret, so its
 * text (names, the organization's own name) was never checked by anyone; whoever opens the page
 * must not mistake it for a real request on Vouch's own site.
 */
function testModeBanner(organization: string): SafeHtml {
  return html`<div class="card test-mode" role="note">
<h2>TEST MODE — sample request from ${organization}, not a real request</h2>
<p>${organization} made this request with its test secret to try Vouch out. Nobody is waiting for your answer, and Vouch never emails test requests.</p>
<p><strong>Do not enter real ID numbers or personal details.</strong> If someone sent you this link as a real request, ignore it.</p>
</div>`;
}

/** A whole page; `testModeOf`: the organization whose test-mode request this page belongs to. */
export function layout(title: string, body: SafeHtml, testModeOf?: string): string {
  const fullTitle = testModeOf === undefined ? title : `TEST MODE · ${title}`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex, nofollow">
<title>${fullTitle} · Vouch</title>
<style>${new SafeHtml(STYLE)}</style>
</head>
<body><main>
${testModeOf === undefined ? '' : testModeBanner(testModeOf)}
${body}
<p class="muted">Sent through Vouch, a verification service. Never share this link: it works once and only for you.</p>
</main></body>
</html>
`.value;
}
