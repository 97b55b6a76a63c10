/**
 * The selfie step: the camera opens on a tap, the person puts their face in the oval, and the
 * server's challenges for this attempt (turn left, blink, ...) are shown one at a time while frames
 * are taken at the server's pace. The frames go to the server, which decides; the page never does.
 */
import { ApiError, NetworkError, type CapturedFrame, type LivenessAttempt, type View } from '../api.js';
import { Camera, CameraError, cameraAvailable, capture, type CapturePlan } from '../camera.js';
import { busy, button, h } from '../dom.js';
import type { Flow } from '../flow.js';
import { challengeWords, plural, qualityText, reasonText } from '../words.js';
import { cameraProblem } from './camera-problems.js';

const STRAIGHT_FRAMES = 3;

export function selfieStep(flow: Flow, view: View): void {
  const unavailable = cameraAvailable();
  if (unavailable) return cameraProblem(flow, view, unavailable);
  const failed = view.lastAttempt && !view.lastAttempt.passed ? view.lastAttempt : null;
  flow.show(
    'selfie',
    h('h1', null, failed ? 'Let us try the selfie again' : 'Take a selfie video'),
    failed
      ? h(
          'div',
          { class: 'notice error-box', attrs: { role: 'alert' } },
          h('p', null, h('strong', null, 'The last try did not pass:')),
          h(
            'ul',
            null,
            // A picture too poor to compare with the ID photo says what was wrong with it.
            failed.reasons.flatMap((reason) =>
              reason === 'POOR_QUALITY' && failed.quality.length > 0 ? failed.quality.map((problem) => h('li', null, qualityText(problem))) : [h('li', null, reasonText(reason))],
            ),
          ),
        )
      : null,
    h('p', null, 'We will ask you to make two or three simple movements, like turning your head, so we know a real person is here.'),
    h(
      'ul',
      { class: 'tips' },
      h('li', null, 'Find good light, in front of you rather than behind you.'),
      h('li', null, 'Hold your phone at eye level and keep your whole face in the oval.'),
      h('li', null, 'Remove a cap or face covering. Glasses are fine.'),
      h('li', null, 'Make each movement when it is shown, then come back to the centre.'),
    ),
    h('p', { class: 'muted' }, `${plural(view.attemptsLeft.liveness, 'try', 'tries')} left.`),
    button('Start camera', () => void openCamera(flow, view)),
    button('Use another device instead', () => flow.handoff(), 'secondary'),
  );
}

interface Viewfinder {
  root: HTMLElement;
  video: HTMLVideoElement;
  prompt: HTMLElement;
  counter: HTMLElement;
  bar: HTMLElement;
  progress: HTMLElement;
}

function viewfinder(): Viewfinder {
  const video = h('video', { class: 'preview', attrs: { playsinline: true, muted: true, autoplay: true, 'aria-label': 'Your camera' } });
  const prompt = h('p', { class: 'prompt', attrs: { 'aria-live': 'assertive' } });
  const counter = h('p', { class: 'challenge-counter' });
  const bar = h('div', { class: 'bar' });
  const progress = h(
    'div',
    { class: 'progress', attrs: { role: 'progressbar', 'aria-label': 'Selfie progress', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': 0 } },
    bar,
  );
  const root = h('div', { class: 'viewfinder' }, video, h('div', { class: 'oval', attrs: { 'aria-hidden': 'true' } }));
  return { root, video, prompt, counter, bar, progress };
}

function setProgress(finder: Viewfinder, fraction: number): void {
  const percent = Math.round(Math.min(1, Math.max(0, fraction)) * 100);
  finder.bar.style.width = `${percent}%`;
  finder.progress.setAttribute('aria-valuenow', String(percent));
}

async function openCamera(flow: Flow, view: View): Promise<void> {
  const finder = viewfinder();
  flow.show('selfie', h('h1', null, 'Opening your camera…'), finder.root, h('p', { class: 'muted' }, 'If your browser asks, allow the camera.'));
  let camera: Camera;
  try {
    camera = await Camera.open(finder.video);
  } catch (error) {
    return cameraProblem(flow, view, error instanceof CameraError ? error.problem : 'failed');
  }
  flow.onLeave(() => camera.close());
  const start = button('I am ready', () => {
    void busy(start, 'Starting…', () => runAttempt(flow, view, camera, finder));
  });
  flow.show(
    'selfie',
    h('h1', null, 'Put your face in the oval'),
    finder.root,
    h('p', null, 'Look straight at the camera. When you tap the button, follow each instruction as it appears.'),
    start,
  );
}

/**
 * The server's frame budget shared out: STRAIGHT_FRAMES looking straight first (the person was
 * already asked to, before tapping), then each movement an equal share, the frames left over going
 * to the last movement, whose prompt has no later one to spill into (docs/liveness.md, "The attempt").
 */
export function capturePlan(attempt: LivenessAttempt): CapturePlan {
  const { maxFrames, frameIntervalMs, maxWidth } = attempt.capture;
  const moves = attempt.challenges.length;
  const straight = Math.min(STRAIGHT_FRAMES, Math.max(1, maxFrames - moves));
  const share = Math.max(1, Math.floor((maxFrames - straight) / Math.max(1, moves)));
  const last = Math.max(1, maxFrames - straight - share * (moves - 1));
  return {
    segments: [{ key: 'straight', frames: straight }, ...attempt.challenges.map((key, index) => ({ key, frames: index === moves - 1 ? last : share }))],
    frameIntervalMs,
    maxWidth,
  };
}

async function runAttempt(flow: Flow, view: View, camera: Camera, finder: Viewfinder): Promise<void> {
  let attempt: LivenessAttempt | undefined;
  try {
    attempt = await flow.run(() => flow.client.startAttempt(), () => selfieStep(flow, view), (e) => e.code === 'TOO_MANY_ATTEMPTS');
  } catch {
    // No tries left: the session has ended; the server's view says how.
    const latest = await flow.run(() => flow.client.view(), () => void flow.start());
    if (latest) flow.go(latest);
    return;
  }
  if (!attempt) return;
  const plan = capturePlan(attempt);
  const movements = attempt.challenges.length;
  flow.show('selfie', h('h1', { class: 'visually-hidden' }, 'Follow the instructions'), finder.root, finder.counter, finder.prompt, finder.progress);
  let frames: CapturedFrame[];
  try {
    frames = await capture(
      camera,
      plan,
      (index) => {
        const key = plan.segments[index]!.key;
        const words = key === 'straight' ? { prompt: 'Look straight at the camera', icon: '●' } : challengeWords(key);
        finder.prompt.replaceChildren(h('span', { class: 'icon', attrs: { 'aria-hidden': 'true' } }, words.icon), ' ', words.prompt);
        finder.counter.textContent = index === 0 ? 'Get ready' : `Movement ${index} of ${movements}`;
        if (index > 0) navigator.vibrate?.(60);
      },
      (taken, total) => setProgress(finder, taken / total),
    );
  } catch {
    camera.close();
    return cameraProblem(flow, view, 'failed');
  }
  camera.close();
  await send(flow, view, attempt, frames);
}

async function send(flow: Flow, view: View, attempt: LivenessAttempt, frames: CapturedFrame[]): Promise<void> {
  const bar = h('div', { class: 'bar' });
  const progress = h('div', { class: 'progress', attrs: { role: 'progressbar', 'aria-label': 'Sending', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': 0 } }, bar);
  flow.show(
    'selfie',
    h('h1', null, 'Checking your selfie…'),
    h('p', null, 'Sending the video and checking it. This can take a little while on a slow connection; keep this page open.'),
    progress,
  );
  try {
    const next = await flow.client.uploadFrames(attempt.attemptId, frames, (fraction) => {
      bar.style.width = `${Math.round(fraction * 100)}%`;
      progress.setAttribute('aria-valuenow', String(Math.round(fraction * 100)));
    });
    flow.go(next);
  } catch (error) {
    if (error instanceof NetworkError && Date.parse(attempt.expiresAt) > Date.now()) {
      // The frames are still here: send them again rather than asking for a new video.
      return flow.show(
        'selfie',
        h('h1', null, 'The selfie was not sent'),
        h('p', null, 'Your connection dropped while sending. Check that you are online, then send it again.'),
        button('Send again', () => void send(flow, view, attempt, frames)),
        button('Record a new one', () => selfieStep(flow, view), 'secondary'),
      );
    }
    if (error instanceof ApiError && error.status < 500 && error.status !== 404 && error.status !== 429) {
      // The attempt is over (expired, already judged): start from the server's view again.
      const latest = await flow.run(() => flow.client.view(), () => void flow.start());
      if (latest) flow.go(latest);
      return;
    }
    flow.problem(error, () => void flow.start());
  }
}
