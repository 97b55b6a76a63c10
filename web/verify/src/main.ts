/**
 * The hosted verification flow, served at /verify/:token (the session's `url`, or its
 * `clientSecret` inside the web SDK's window). Vanilla TypeScript: the whole first screen is a few
 * kilobytes, which matters on a slow 3G line.
 */
import './style.css';
import { createClient } from './api.js';
import { embedding } from './embed.js';
import { Flow } from './flow.js';
import { Frame, refuseOrigin } from './frame.js';

function tokenFrom(path: string): string {
  const match = /^\/verify\/([^/?#]+)/.exec(path);
  return match ? decodeURIComponent(match[1]!) : '';
}

const root = document.getElementById('app');
if (root) {
  const embedded = embedding(location, window);
  // At once, before the session loads: the SDK treats a frame that never says so as failed to load.
  embedded?.post({ type: 'vouch.ready' });
  // Room at the top for the SDK's close button.
  if (embedded) document.documentElement.classList.add('embedded');
  if (root.dataset.refused === 'origin') {
    // The server refused this website's origin (the organization's allowed list): say so here and
    // to the SDK, and never load the session.
    refuseOrigin(new Frame(root), embedded);
  } else {
    const flow = new Flow(createClient(tokenFrom(location.pathname)), new Frame(root), embedded);
    void flow.start();
  }
}
