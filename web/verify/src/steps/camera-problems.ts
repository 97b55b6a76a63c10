/**
 * When the camera cannot be opened: say why in plain words, and offer what can still work —
 * trying again, continuing on a phone (QR code and short link), or, inside a website's window,
 * opening the verification in a page of its own.
 */
import type { View } from '../api.js';
import type { CameraProblem } from '../camera.js';
import { button, h } from '../dom.js';
import type { Flow } from '../flow.js';
import { selfieStep } from './selfie.js';

const WORDS: Record<CameraProblem, { title: string; text: string }> = {
  denied: {
    title: 'Camera access is blocked',
    text: 'The selfie needs your camera. Allow it: tap the camera or lock icon next to the web address, choose Allow for the camera, then try again. Or continue on another phone.',
  },
  'not-found': {
    title: 'No camera found',
    text: 'We could not find a camera on this device. Continue on a phone with a front camera: scan a code or open a short link there, and this page will show the result when you are done.',
  },
  'in-use': {
    title: 'Your camera is busy',
    text: 'Another app is using the camera. Close other apps that use it (video calls, the camera app), then try again.',
  },
  insecure: {
    title: 'This page cannot use the camera',
    text: 'The camera only works on a secure (https) page. Continue on another phone instead.',
  },
  unsupported: {
    title: 'This browser cannot open the camera',
    text: "The browser inside this app cannot use the camera. Open the link in Chrome or Safari, or continue on another phone.",
  },
  failed: {
    title: 'The camera stopped working',
    text: 'Something went wrong with the camera. Try again, or continue on another phone.',
  },
};

async function copyLink(control: HTMLButtonElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(location.href);
    control.textContent = 'Link copied';
  } catch {
    control.textContent = 'Copy the address from the address bar';
  }
}

export function cameraProblem(flow: Flow, view: View, problem: CameraProblem): void {
  flow.cleanupNow();
  const words = WORDS[problem];
  const phoneFirst = problem === 'not-found' || problem === 'insecure';
  const handoff = button('Continue on my phone', () => flow.handoff(), phoneFirst ? 'primary' : 'secondary');
  const retry = problem === 'insecure' ? null : button('Try again', () => selfieStep(flow, view), phoneFirst ? 'secondary' : 'primary');
  const copy = problem === 'unsupported' && !flow.embedded ? button('Copy link to open in your browser', () => void copyLink(copy!), 'secondary') : null;
  const fullPage = flow.embedded && (problem === 'denied' || problem === 'unsupported') ? button('Open in a new page', () => flow.embedded!.post({ type: 'vouch.fullpage' }), 'secondary') : null;
  const actions = phoneFirst ? [handoff, retry] : [retry, handoff, fullPage, copy];
  flow.show('selfie', h('h1', null, words.title), h('p', null, words.text), ...actions);
}
