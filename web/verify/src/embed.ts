/**
 * The flow inside the web SDK's modal (`?embed=1&origin=<the page's origin>`): results go to the
 * parent page by postMessage, addressed to that exact origin, so no other page can read them. The
 * server only lets the flow be framed by that same origin (CSP frame-ancestors).
 */

export type EmbedMessage =
  | { type: 'vouch.ready' }
  | { type: 'vouch.complete'; sessionId: string | null; status: string }
  | { type: 'vouch.cancel'; sessionId: string | null; status: string }
  | { type: 'vouch.error'; sessionId: string | null; code: string; message: string }
  | { type: 'vouch.close' }
  | { type: 'vouch.dismiss' }
  | { type: 'vouch.fullpage' };

export interface Embedding {
  origin: string;
  post(message: EmbedMessage): void;
}

/** The parent page to report to, when this page is framed and was opened by the SDK with an exact origin. */
export function embedding(location: Location, self: Window): Embedding | null {
  const query = new URLSearchParams(location.search);
  if (query.get('embed') !== '1' || self.parent === self) return null;
  const origin = query.get('origin') ?? '';
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return null;
  }
  if (parsed.origin !== origin) return null;
  const parent = self.parent;
  const post = (message: EmbedMessage) => parent.postMessage(message, origin);
  // Escape closes the SDK's window wherever the focus is (inside this frame, the page never sees the key).
  self.document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') post({ type: 'vouch.dismiss' });
  });
  return { origin, post };
}
