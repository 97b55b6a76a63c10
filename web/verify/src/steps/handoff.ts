/**
 * Cross-device handoff: where this device cannot take the selfie, a QR code and a short link open
 * the same verification on a phone. This page waits, asking the server every few seconds, and shows
 * the result when the phone has finished.
 */
import { ApiError, NetworkError, type Handoff, type View } from '../api.js';
import { button, h } from '../dom.js';
import type { Flow } from '../flow.js';
import { formatTime } from '../words.js';
import { selfieStep } from './selfie.js';

const POLL_MS = 3_000;

const PHONE_STEPS: Record<View['step'], string> = {
  consent: 'Waiting for you to open the link on your phone…',
  id: 'Opened on your phone. Waiting for your ID…',
  liveness: 'Waiting for your selfie on your phone…',
  processing: 'Checking your selfie…',
  done: 'Finished.',
};

function qrImage(handoff: Handoff): HTMLImageElement {
  // As an image, the server's SVG is only drawn: nothing in it can run in this page.
  return h('img', {
    class: 'qr',
    attrs: { src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(handoff.qrSvg)}`, alt: `QR code for ${handoff.shortUrl}`, width: 200, height: 200 },
  });
}

export async function handoffStep(flow: Flow, view: View): Promise<void> {
  flow.cleanupNow();
  flow.loading('Making a link for your phone…');
  const handoff = await flow.run(() => flow.client.handoff(), () => void handoffStep(flow, view));
  if (!handoff) return;

  const status = h('p', { class: 'waiting', attrs: { role: 'status' } }, h('span', { class: 'spinner small', attrs: { 'aria-hidden': 'true' } }), PHONE_STEPS[view.step]);
  const copy = button('Copy link', () => {
    navigator.clipboard?.writeText(handoff.shortUrl).then(
      () => (copy.textContent = 'Link copied'),
      () => (copy.textContent = 'Select the link to copy it'),
    );
  }, 'secondary');
  flow.show(
    'selfie',
    h('h1', null, 'Continue on your phone'),
    h('p', null, "Scan this code with your phone's camera, or open the link below on your phone. Keep this page open: it will show your result when you finish."),
    qrImage(handoff),
    h('p', { class: 'short-link' }, h('span', { class: 'muted' }, 'Link: '), h('strong', null, handoff.shortUrl)),
    copy,
    h('p', { class: 'muted' }, `The code and link work until ${formatTime(handoff.expiresAt)}.`),
    status,
    button('Use this device instead', () => selfieStep(flow, view), 'link'),
  );

  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  flow.onLeave(() => {
    stopped = true;
    clearTimeout(timer);
  });
  const setStatus = (text: string) => status.replaceChildren(h('span', { class: 'spinner small', attrs: { 'aria-hidden': 'true' } }), text);

  const poll = async () => {
    if (stopped) return;
    try {
      const next = await flow.client.view();
      if (stopped) return;
      if (next.step === 'done') return flow.go(next);
      flow.view = next;
      setStatus(PHONE_STEPS[next.step]);
    } catch (error) {
      if (stopped) return;
      if (error instanceof ApiError && error.status === 404) return flow.problem(error, () => void flow.start());
      if (!(error instanceof NetworkError) && !(error instanceof ApiError && error.status === 429)) return flow.problem(error, () => void handoffStep(flow, view));
      setStatus('Connection lost. Trying again…');
    }
    if (Date.parse(handoff.expiresAt) <= Date.now()) {
      flow.cleanupNow();
      return flow.show(
        'selfie',
        h('h1', null, 'The code has expired'),
        h('p', null, 'The code and link for your phone have expired. Get a new one, or use this device.'),
        button('Get a new code', () => void handoffStep(flow, view)),
        button('Use this device instead', () => selfieStep(flow, view), 'secondary'),
      );
    }
    timer = setTimeout(() => void poll(), POLL_MS);
  };
  timer = setTimeout(() => void poll(), POLL_MS);
}
