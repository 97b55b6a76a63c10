/**
 * The page around every step: the organization's name, logo and colour, the TEST MODE banner, the
 * step counter, and a footer. `show` replaces the step's content and moves focus to its heading so
 * a screen reader announces the new step.
 */
import type { View } from './api.js';
import { h } from './dom.js';
import type { Embedding } from './embed.js';

export type StepName = 'consent' | 'id' | 'selfie' | 'result';

const STEP_TITLES: Record<StepName, string> = { consent: 'Consent', id: 'Your ID', selfie: 'Selfie', result: 'Result' };

/** The steps this session goes through: the ID step is skipped when the organization gave the number. */
export function stepsOf(view: View): StepName[] {
  const steps: StepName[] = ['consent'];
  if (!view.prefilled.idNumberMasked) steps.push('id');
  if (view.checks.liveness || view.checks.faceMatch) steps.push('selfie');
  steps.push('result');
  return steps;
}

const DARK_TEXT = '#111418';

function luminance(colour: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(colour.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/**
 * `#rrggbb` only; anything else keeps Vouch's own colour. White or near-black text, whichever
 * contrasts more (the server refuses colours on which neither reaches 4.5:1: src/portal/branding/colour.ts).
 */
function brandColour(colour: string | null): { brand: string; onBrand: string } | null {
  if (!colour || !/^#[0-9a-f]{6}$/i.test(colour)) return null;
  const brand = luminance(colour);
  const onWhite = 1.05 / (brand + 0.05);
  const onDark = (brand + 0.05) / (luminance(DARK_TEXT) + 0.05);
  return { brand: colour, onBrand: onWhite >= onDark ? '#ffffff' : DARK_TEXT };
}

function logo(view: View): HTMLImageElement | null {
  const url = view.organization.logoUrl;
  if (!url) return null;
  let parsed: URL;
  try {
    parsed = new URL(url, location.href);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:' && parsed.protocol !== 'data:') return null;
  const image = h('img', { class: 'logo', attrs: { src: parsed.href, alt: '', width: 40, height: 40 } });
  // A logo the page may not load (blocked, gone) leaves the name alone rather than a broken icon.
  image.addEventListener('error', () => image.remove());
  return image;
}

export function present(nodes: Array<Node | null>): Node[] {
  return nodes.filter((node): node is Node => node !== null);
}

export class Frame {
  private readonly content: HTMLElement;
  private readonly header: HTMLElement;
  private readonly counter: HTMLElement;
  private readonly footer: HTMLElement;

  constructor(private readonly root: HTMLElement) {
    this.header = h('header', { class: 'brand' });
    this.counter = h('p', { class: 'counter' });
    this.content = h('section', { class: 'card', attrs: { 'aria-live': 'polite' } });
    this.footer = h('footer', { class: 'footer' });
    root.replaceChildren(this.header, this.counter, this.content, this.footer);
  }

  /** The organization's branding and test banner, once the view is known. */
  brand(view: View): void {
    const colours = brandColour(view.organization.colour);
    if (colours) {
      document.documentElement.style.setProperty('--brand', colours.brand);
      document.documentElement.style.setProperty('--on-brand', colours.onBrand);
      // The phone's address bar in the organization's colour too.
      document.querySelector('meta[name="theme-color"]')?.setAttribute('content', colours.brand);
    }
    document.title = `${view.testMode ? 'TEST MODE · ' : ''}Verify your identity · ${view.organization.name}`;
    const banner = view.testMode
      ? h(
          'div',
          { class: 'test-mode', attrs: { role: 'note' } },
          h('strong', null, 'TEST MODE'),
          ' This is a test verification. Use the sandbox identities; no real records are checked and nothing is charged.',
        )
      : null;
    this.header.replaceChildren(...present([banner, h('div', { class: 'org' }, logo(view), h('span', { class: 'org-name' }, view.organization.name))]));
  }

  /** Replaces the step's content; `step` numbers it among the session's steps. */
  show(view: View | null, step: StepName | null, ...children: Array<Node | null>): void {
    if (view && step) {
      const steps = stepsOf(view);
      const index = steps.indexOf(step);
      this.counter.textContent = index >= 0 ? `Step ${index + 1} of ${steps.length} · ${STEP_TITLES[step]}` : '';
    } else {
      this.counter.textContent = '';
    }
    this.content.replaceChildren(...present(children));
    const heading = this.content.querySelector('h1');
    if (heading) {
      heading.setAttribute('tabindex', '-1');
      heading.focus({ preventScroll: true });
    }
    window.scrollTo(0, 0);
  }

  footerWith(...children: Node[]): void {
    this.footer.replaceChildren(...children, h('p', { class: 'secured' }, 'Identity checks by Vouch'));
  }

  get element(): HTMLElement {
    return this.root;
  }
}

/**
 * The page the server serves when the website framing it is not among the organization's allowed
 * origins: it says so, tells the SDK why (onError ORIGIN_NOT_ALLOWED), and loads nothing.
 */
export function refuseOrigin(frame: Frame, embedded: Embedding | null): void {
  const message = 'This website is not allowed to show this verification.';
  embedded?.post({ type: 'vouch.error', sessionId: null, code: 'ORIGIN_NOT_ALLOWED', message: `${message} Add its origin to the allowed origins in the Vouch portal.` });
  document.title = 'Cannot be shown here';
  frame.footerWith();
  frame.show(
    null,
    null,
    h('h1', null, 'Cannot be shown here'),
    h('p', null, message),
    h('p', null, 'Open the verification link you were sent directly, or ask the organization that asked you to verify for help.'),
  );
}
