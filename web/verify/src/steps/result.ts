/**
 * The end: the outcome in plain words, then back to the organization — to its redirectUrl with the
 * session id and status as query parameters, or, inside the web SDK's window, by a message to the
 * page that opened it.
 */
import { ApiError, NetworkError, type View } from '../api.js';
import { button, h } from '../dom.js';
import type { Flow } from '../flow.js';
import { reasonText } from '../words.js';

const REDIRECT_SECONDS = 5;
const POLL_MS = 2_000;

export type SessionStatus = 'verified' | 'failed' | 'cancelled' | 'expired';

/** The status the organization's page is told: it must still fetch the session from its server to trust it. */
export function sessionStatus(view: View): SessionStatus {
  if (view.status === 'verified' || view.status === 'failed' || view.status === 'cancelled' || view.status === 'expired') return view.status;
  const reasons = view.result?.reasons ?? [];
  if (reasons.includes('CANCELLED')) return 'cancelled';
  if (reasons.includes('EXPIRED')) return 'expired';
  return view.result?.outcome === 'verified' ? 'verified' : 'failed';
}

/** The organization's redirectUrl with `session_id` and `status` added; null when there is none or it is not a web address. */
export function returnUrl(view: View): string | null {
  if (!view.redirectUrl) return null;
  let url: URL;
  try {
    url = new URL(view.redirectUrl);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  url.searchParams.set('session_id', view.sessionId);
  url.searchParams.set('status', sessionStatus(view));
  return url.href;
}

export function resultStep(flow: Flow, view: View): void {
  const status = sessionStatus(view);
  const org = view.organization.name;
  const verified = status === 'verified';
  const heading = {
    verified: 'You are verified',
    failed: 'We could not verify you',
    cancelled: 'Verification cancelled',
    expired: 'This verification has expired',
  }[status];
  const reasons = view.result?.reasons.filter((reason) => reason !== 'CANCELLED' && reason !== 'EXPIRED') ?? [];
  const body: Array<Node | null> = [
    h('div', { class: `outcome ${verified ? 'ok' : 'not-ok'}`, attrs: { 'aria-hidden': 'true' } }, verified ? '✓' : '✕'),
    h('h1', null, heading),
    verified ? h('p', null, `Thank you. ${org} has been told that your identity is confirmed.`) : null,
    status === 'failed' ? h('p', null, `${org} has been told. What we found:`) : null,
    reasons.length ? h('ul', null, reasons.map((reason) => h('li', null, reasonText(reason)))) : null,
    status === 'failed' ? h('p', null, `If you think this is wrong, contact ${org}.`) : null,
    status === 'expired' ? h('p', null, `Ask ${org} for a new link to verify.`) : null,
  ];

  if (flow.embedded) {
    const message = { sessionId: view.sessionId, status };
    flow.embedded.post(status === 'cancelled' ? { type: 'vouch.cancel', ...message } : { type: 'vouch.complete', ...message });
    flow.show('result', ...body, button('Done', () => flow.embedded!.post({ type: 'vouch.close' })));
    return;
  }

  const target = returnUrl(view);
  if (!target) {
    flow.show('result', ...body, h('p', { class: 'muted' }, 'You can close this page now.'));
    return;
  }
  let left = REDIRECT_SECONDS;
  const countdown = h('p', { class: 'muted', attrs: { role: 'status' } });
  const tick = () => (countdown.textContent = `Taking you back to ${org} in ${left} s…`);
  tick();
  const go = () => {
    clearInterval(timer);
    location.assign(target);
  };
  const timer = setInterval(() => {
    left -= 1;
    if (left <= 0) go();
    else tick();
  }, 1000);
  flow.onLeave(() => clearInterval(timer));
  flow.show('result', ...body, button(`Continue to ${org}`, go), countdown);
}

/** The server is still deciding (another tab or the phone sent the selfie): ask again every two seconds. */
export function processingStep(flow: Flow, view: View): void {
  flow.show(
    'selfie',
    h('div', { class: 'loading', attrs: { role: 'status' } }, h('span', { class: 'spinner', attrs: { 'aria-hidden': 'true' } })),
    h('h1', null, 'Checking your selfie…'),
    h('p', null, 'This usually takes a few seconds.'),
  );
  let stopped = false;
  const timer = setTimeout(async function poll() {
    if (stopped) return;
    try {
      const next = await flow.client.view();
      if (!stopped && next.step !== 'processing') return flow.go(next);
    } catch (error) {
      if (stopped) return;
      if (!(error instanceof NetworkError) && !(error instanceof ApiError && error.status === 429)) return flow.problem(error, () => void flow.start());
    }
    if (!stopped) setTimeout(poll, POLL_MS);
  }, POLL_MS);
  flow.onLeave(() => {
    stopped = true;
    clearTimeout(timer);
  });
}
