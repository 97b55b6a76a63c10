/**
 * The flow's controller: holds the latest view from the server, shows the step the server says
 * the session is at, and turns every failure into a screen that says what happened and what to do.
 * The server decides everything (which step, whether a check passed); the page only guides.
 */
import { ApiError, NetworkError, type Client, type View } from './api.js';
import { button, h } from './dom.js';
import type { Embedding } from './embed.js';
import { Frame, type StepName } from './frame.js';
import { consentStep } from './steps/consent.js';
import { handoffStep } from './steps/handoff.js';
import { identityStep } from './steps/identity.js';
import { processingStep, resultStep } from './steps/result.js';
import { selfieStep } from './steps/selfie.js';

export class Flow {
  view: View | null = null;
  private stopped: Array<() => void> = [];

  constructor(
    readonly client: Client,
    readonly frame: Frame,
    readonly embedded: Embedding | null,
  ) {}

  async start(): Promise<void> {
    this.loading('Loading your verification…');
    const view = await this.run(() => this.client.view(), () => void this.start());
    if (view) this.go(view);
  }

  /** Shows the step the server's view is at. */
  go(view: View): void {
    this.cleanup();
    const first = this.view === null;
    this.view = view;
    if (first) this.frame.brand(view);
    this.frame.footerWith(...(view.step === 'done' ? [] : [button('Cancel verification', () => this.confirmCancel(), 'link')]));
    switch (view.step) {
      case 'consent':
        return consentStep(this, view);
      case 'id':
        return identityStep(this, view);
      case 'liveness':
        return selfieStep(this, view);
      case 'processing':
        return processingStep(this, view);
      case 'done':
        return resultStep(this, view);
    }
  }

  show(step: StepName | null, ...children: Array<Node | null>): void {
    this.frame.show(this.view, step, ...children);
  }

  loading(message: string): void {
    this.show(null, h('div', { class: 'loading', attrs: { role: 'status' } }, h('span', { class: 'spinner', attrs: { 'aria-hidden': 'true' } }), h('p', null, message)));
  }

  /** Registers something to stop (a camera, a timer) when the flow moves to another screen. */
  onLeave(stop: () => void): void {
    this.stopped.push(stop);
  }

  private cleanup(): void {
    const stops = this.stopped;
    this.stopped = [];
    for (const stop of stops) stop();
  }

  /**
   * Runs a call to the server; on failure shows a screen for it (with `retry` where trying again
   * can help) and answers undefined. `expected` lets a step handle some API errors itself.
   */
  async run<T>(action: () => Promise<T>, retry: () => void, expected?: (error: ApiError) => boolean): Promise<T | undefined> {
    try {
      return await action();
    } catch (error) {
      if (error instanceof ApiError && expected?.(error)) throw error;
      this.problem(error, retry);
      return undefined;
    }
  }

  problem(error: unknown, retry: () => void): void {
    this.cleanup();
    const again = () => {
      retry();
    };
    if (error instanceof NetworkError) {
      return this.show(
        null,
        h('h1', null, 'No connection'),
        h('p', null, 'We could not reach the server. Check that you are connected to the internet (mobile data or Wi-Fi), then try again. Nothing you have done so far is lost.'),
        button('Try again', again),
      );
    }
    if (error instanceof ApiError && error.status === 404) {
      this.embedded?.post({ type: 'vouch.error', sessionId: this.view?.sessionId ?? null, code: 'NOT_FOUND', message: 'The verification link is not valid or has ended.' });
      return this.show(
        null,
        h('h1', null, 'This link is not valid'),
        h('p', null, 'This verification link is not valid or has ended. Open the whole link from your message again; if it still does not work, ask the organization that sent it for a new one.'),
      );
    }
    if (error instanceof ApiError && error.status === 429) {
      // The server says how long (a minute for the page's own pace, an hour for a public link's tries from one network).
      return this.show(null, h('h1', null, 'Too many tries'), h('p', null, error.message || 'Please wait a minute, then try again.'), button('Try again', again));
    }
    if (error instanceof ApiError && error.status === 503) {
      return this.show(
        null,
        h('h1', null, 'Not available just now'),
        h('p', null, 'A service this check needs is not answering at the moment. Nothing is lost: please try again in a minute.'),
        button('Try again', again),
      );
    }
    if (error instanceof ApiError && error.status < 500) {
      return this.show(null, h('h1', null, 'That did not work'), h('p', null, error.message), button('Start again', () => void this.start()));
    }
    return this.show(
      null,
      h('h1', null, 'Something went wrong'),
      h('p', null, 'Sorry, something went wrong on our side. Please try again in a moment.'),
      button('Try again', again),
    );
  }

  /** Continue on a phone: a QR code and a short link, then wait here for the phone to finish. */
  handoff(): void {
    if (this.view) handoffStep(this, this.view);
  }

  private confirmCancel(): void {
    const view = this.view;
    if (!view) return;
    const back = () => this.go(view);
    this.frame.footerWith();
    this.show(
      null,
      h('h1', null, 'Cancel this verification?'),
      h('p', null, `${view.organization.name} will be told that you stopped. To verify later, you will need a new link from them.`),
      button('Yes, cancel', () => void this.cancel()),
      button('No, go back', back, 'secondary'),
    );
  }

  private async cancel(): Promise<void> {
    this.loading('Cancelling…');
    const view = await this.run(() => this.client.cancel(), () => void this.cancel());
    if (view) this.go(view);
  }

  cleanupNow(): void {
    this.cleanup();
  }
}
