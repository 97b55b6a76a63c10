/**
 * The web SDK, served at /sdk/v1/vouch.js: `Vouch.open({ clientSecret, onComplete, onCancel,
 * onError })` opens the hosted flow in a modal window (an iframe allowed to use the camera), or,
 * where an iframe cannot work, in the whole page, returning to the session's redirectUrl.
 *
 * Messages are trusted only from Vouch's own origin (where this script came from) and only from
 * this modal's own iframe; the flow addresses its messages to this page's exact origin.
 * No dependencies; docs/sdk.md is the guide.
 */

interface Result {
  sessionId: string | null;
  status: string;
}

interface VouchError {
  code: string;
  message: string;
}

interface OpenOptions {
  clientSecret: string;
  onComplete?: (result: Result) => void;
  onCancel?: (result: Result) => void;
  onError?: (error: VouchError) => void;
  /** `auto` (default): a modal, or the whole page where a modal cannot use the camera. */
  mode?: 'auto' | 'modal' | 'redirect';
  /** Where Vouch is served; by default the origin this script was loaded from. */
  baseUrl?: string;
}

interface Handle {
  close(): void;
}

const SCRIPT_ORIGIN = (() => {
  const script = document.currentScript as HTMLScriptElement | null;
  try {
    return script?.src ? new URL(script.src).origin : null;
  } catch {
    return null;
  }
})();

const SECRET = /^vcs_[A-Za-z0-9_-]{16,200}$/;
/** No word from the frame this long after opening (offline), or this long after it loaded (refused), is a failed load. */
const LOAD_TIMEOUT_MS = 30_000;
const READY_AFTER_LOAD_MS = 5_000;

let current: Handle | null = null;

/**
 * In-app browsers on iOS (Facebook, Instagram, ...) and iOS before 14.3 give no camera to a page
 * inside an iframe; a page whose own origin is opaque cannot be named as a frame ancestor.
 */
function modalCannotWork(): boolean {
  if (!window.isSecureContext || window.location.origin === 'null') return true;
  const ua = navigator.userAgent;
  const ios = /iPhone|iPad|iPod/.test(ua) || (/Macintosh/.test(ua) && navigator.maxTouchPoints > 1);
  if (!ios) return false;
  const inApp = /FBAN|FBAV|Instagram|Line\/|Twitter|Snapchat|GSA\//.test(ua) || !/Safari\//.test(ua);
  const version = /OS (\d+)_(\d+)/.exec(ua);
  const old = version ? Number(version[1]) < 14 || (Number(version[1]) === 14 && Number(version[2]) < 3) : false;
  return inApp || old;
}

function css(element: HTMLElement, styles: Record<string, string>): void {
  for (const [name, value] of Object.entries(styles)) element.style.setProperty(name, value);
}

function fail(options: OpenOptions, code: string, message: string): Handle {
  if (options.onError) options.onError({ code, message });
  else console.error(`Vouch: ${message}`);
  return { close() {} };
}

function open(options: OpenOptions): Handle {
  if (!options || typeof options.clientSecret !== 'string' || !SECRET.test(options.clientSecret)) {
    return fail(options ?? ({} as OpenOptions), 'INVALID_CLIENT_SECRET', 'clientSecret must be the session\'s vcs_... value from your server');
  }
  let base: string;
  try {
    base = new URL(options.baseUrl ?? SCRIPT_ORIGIN ?? '').origin;
  } catch {
    return fail(options, 'INVALID_BASE_URL', 'Could not tell where Vouch is served: load vouch.js from your Vouch server or pass baseUrl');
  }
  const flowUrl = `${base}/verify/${encodeURIComponent(options.clientSecret)}`;
  const mode = options.mode ?? 'auto';
  if (mode === 'redirect' || (mode === 'auto' && modalCannotWork())) {
    window.location.assign(flowUrl);
    return { close() {} };
  }
  current?.close();

  const overlay = document.createElement('div');
  overlay.setAttribute('role', 'dialog');
  overlay.setAttribute('aria-modal', 'true');
  overlay.setAttribute('aria-label', 'Identity verification');
  css(overlay, { position: 'fixed', inset: '0', 'z-index': '2147483647', background: 'rgba(15,18,22,0.6)', display: 'flex', 'align-items': 'center', 'justify-content': 'center' });
  const panel = document.createElement('div');
  const phone = window.matchMedia('(max-width: 600px)').matches;
  css(panel, phone
    ? { position: 'relative', width: '100%', height: '100%', background: '#fff' }
    : { position: 'relative', width: '440px', height: 'min(760px, calc(100% - 40px))', background: '#fff', 'border-radius': '12px', overflow: 'hidden', 'box-shadow': '0 10px 40px rgba(0,0,0,0.35)' });
  const frame = document.createElement('iframe');
  frame.src = `${flowUrl}?embed=1&origin=${encodeURIComponent(window.location.origin)}`;
  frame.title = 'Verify your identity';
  // The camera, and nothing else: no microphone, no geolocation, no navigating this page.
  frame.allow = 'camera';
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
  frame.referrerPolicy = 'no-referrer';
  css(frame, { width: '100%', height: '100%', border: '0', display: 'block' });
  const closeButton = document.createElement('button');
  closeButton.type = 'button';
  closeButton.setAttribute('aria-label', 'Close verification');
  closeButton.textContent = '×';
  css(closeButton, { position: 'absolute', top: '8px', right: '8px', width: '40px', height: '40px', margin: '0', padding: '0', border: '1px solid #d0d7de', 'border-radius': '20px', background: '#fff', color: '#1b1f24', font: '26px/38px system-ui, sans-serif', 'text-align': 'center', cursor: 'pointer' });
  panel.append(frame, closeButton);
  overlay.append(panel);

  const scroll = document.documentElement.style.overflow;
  let finished: Result | null = null;
  let ready = false;
  let done = false;

  const onMessage = (event: MessageEvent) => {
    if (event.origin !== base || event.source !== frame.contentWindow) return;
    const data = event.data as Record<string, unknown> | null;
    if (!data || typeof data !== 'object' || typeof data.type !== 'string') return;
    const result = (): Result => ({ sessionId: typeof data.sessionId === 'string' ? data.sessionId : null, status: typeof data.status === 'string' ? data.status : 'unknown' });
    switch (data.type) {
      case 'vouch.ready':
        ready = true;
        break;
      case 'vouch.complete':
        if (!finished) {
          finished = result();
          options.onComplete?.(finished);
        }
        break;
      case 'vouch.cancel':
        if (!finished) {
          finished = result();
          options.onCancel?.(finished);
        }
        break;
      case 'vouch.error':
        options.onError?.({ code: typeof data.code === 'string' ? data.code : 'ERROR', message: typeof data.message === 'string' ? data.message : 'The verification could not continue' });
        break;
      case 'vouch.close':
        teardown();
        break;
      case 'vouch.dismiss':
        closeByUser();
        break;
      case 'vouch.fullpage':
        teardown();
        window.location.assign(flowUrl);
        break;
    }
  };
  const onKey = (event: KeyboardEvent) => {
    if (event.key === 'Escape') closeByUser();
  };
  const loadFailed = () => {
    if (ready || done) return;
    teardown();
    options.onError?.({ code: 'LOAD_FAILED', message: 'The verification did not load (offline, or this page\'s origin may not embed it)' });
  };
  const timer = setTimeout(loadFailed, LOAD_TIMEOUT_MS);
  // The flow says it is ready as its script starts, before the frame's load event: a frame that
  // loaded without a word is the browser's error page (refused framing, a server error).
  frame.addEventListener('load', () => setTimeout(loadFailed, READY_AFTER_LOAD_MS));

  function teardown() {
    if (done) return;
    done = true;
    clearTimeout(timer);
    window.removeEventListener('message', onMessage);
    document.removeEventListener('keydown', onKey);
    overlay.remove();
    document.documentElement.style.overflow = scroll;
    if (current === handle) current = null;
  }
  function closeByUser() {
    const wasFinished = finished;
    teardown();
    if (!wasFinished) options.onCancel?.({ sessionId: null, status: 'closed' });
  }
  closeButton.addEventListener('click', closeByUser);

  window.addEventListener('message', onMessage);
  document.addEventListener('keydown', onKey);
  document.documentElement.style.overflow = 'hidden';
  document.body.append(overlay);
  frame.focus();

  const handle: Handle = { close: teardown };
  current = handle;
  return handle;
}

(window as unknown as { Vouch: unknown }).Vouch = Object.freeze({ open, version: '1' });
