/**
 * `decision-fairness`: how long another organization's end user waits for a liveness decision
 * while a free test account and a live account keep the engine busy (issue 49; docs/security.md,
 * the second review: 77 s and 15 refusals against 1.7 s idle).
 *
 * A built `vouch serve` on the embedded database in a temporary data folder, set up through the
 * CLI: three organizations (a test-only attacker, a funded live attacker, a funded live victim),
 * one live NIN record. Every session skips the face match (`checks.faceMatch: false`), so the
 * frames POST answers when the liveness decision is made. Each submission is the genuine webcam
 * loop with new bytes (a serial drawn into its first row of pixels), since frames seen in an
 * earlier attempt are refused as replayed before the engine runs.
 *
 * - idle: the victim's decision time (the frames POST until its 200) with nothing else running;
 * - attack: each attacker keeps `ATTACKERS_IN_FLIGHT` submissions in flight, each on a fresh
 *   session, sending a refused one again after its Retry-After as the page does; after a ramp,
 *   the victim decides attempts one after another, each timed from its first send to its 200
 *   through every 503 and wait; they start `VICTIM_EVERY_MS` apart, so the attack lasts a minute
 *   or more.
 *
 * `BENCH_VOUCH_ROOT=DIR` runs another checkout's build (DIR/dist/main.js, built there with
 * `npm run build`, run with DIR as its working folder) instead of this one's: the code before a
 * change, measured with the same driver. The frames come from this checkout's test fixtures.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp, { type OutputInfo } from 'sharp';
import { fixturePath, loopCapture } from '../../test/liveness/genuine.js';
import { deferCleanup } from '../lib/cleanup.js';
import { BenchError } from '../lib/errors.js';
import { lastJsonLine, NO_RATE_LIMITS, runCommand, startServer, type Env, type RunningServer } from '../lib/processes.js';
import { median, round } from '../lib/report.js';
import { atMost, type Section } from '../lib/section.js';

const IDLE_ATTEMPTS = 3;
/** More than the old fixed places (4 per process, 2 per organization, 2 for test mode). */
const ATTACKERS_IN_FLIGHT = 6;
/** The attackers fill the queue before the victim's first attempt. */
const RAMP_MS = 8_000;
const VICTIM_ATTEMPTS = 3;
/** The victim's attempts start this far apart (or when the one before is decided, if later)... */
const VICTIM_EVERY_MS = 25_000;
/** ...and none later than this after the ramp; the attack lasts until the last is decided. */
const VICTIM_WINDOW_MS = 70_000;
/** A victim attempt not decided by then is given up and counted as undecided. */
const VICTIM_CEILING_MS = 100_000;
const TARGET_RATIO = 4;
const TARGET_REFUSALS = 2;

const PERSON = { nin: '30571948260', firstname: 'Fixture', lastname: 'Webcamperson', gender: 'Male', birthdate: '01-01-1985' };
const SESSIONS = '/v1/verifications/sessions';
/** The page scales its frames to the attempt's `capture.maxWidth`. */
const CAPTURE_WIDTH = 480;

interface Answer {
  status: number;
  body: Record<string, any>;
  retryAfterMs: number;
}

async function send(server: RunningServer, pathname: string, init: { secret?: string; json?: unknown; form?: FormData; signal?: AbortSignal }): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (init.secret) headers.authorization = `Bearer ${init.secret}`;
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.url}${pathname}`, { method: 'POST', headers, body: init.form ?? JSON.stringify(init.json), signal: init.signal });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, any>) : {}, retryAfterMs: Number(response.headers.get('retry-after') ?? 5) * 1000 };
}

function expectStatus(answer: Answer, status: number, what: string): Record<string, any> {
  if (answer.status !== status) throw new BenchError(`${what} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`);
  return answer.body;
}

/** A session at the liveness step with an attempt started: what the page holds before it captures. */
async function attemptFor(server: RunningServer, secret: string, nin: string, signal?: AbortSignal): Promise<{ token: string; attemptId: string }> {
  const created = expectStatus(await send(server, SESSIONS, { secret, json: { checks: { liveness: true, faceMatch: false } }, signal }), 201, 'session create');
  const token = /\/verify\/([A-Za-z0-9_-]+)$/.exec(created.data.url as string)?.[1];
  if (!token) throw new BenchError(`unexpected session url ${created.data.url}`);
  const api = `/verify/api/${token}`;
  expectStatus(await send(server, `${api}/consent`, { json: { accepted: true }, signal }), 200, 'consent');
  const view = expectStatus(await send(server, `${api}/id`, { json: { idType: 'NIN', idNumber: nin }, signal }), 200, 'ID step');
  if (view.step !== 'liveness') throw new BenchError(`the ID step led to ${view.step}, not liveness: ${JSON.stringify(view).slice(0, 300)}`);
  const attempt = expectStatus(await send(server, `${api}/liveness/attempts`, { json: {}, signal }), 201, 'attempt start');
  return { token, attemptId: attempt.attemptId as string };
}

/** The genuine loop as a new capture each call: same faces and movements, bytes never sent before. */
function captures() {
  const decoded = new Map<Buffer, Promise<{ data: Buffer; info: OutputInfo }>>();
  let serial = 0;
  return async (): Promise<FormData> => {
    serial += 1;
    const frames = loopCapture('genuine.mjpeg', (serial * 173) % 1067);
    const jpegs = await Promise.all(
      frames.map(async (frame) => {
        let raw = decoded.get(frame.jpeg);
        if (!raw) decoded.set(frame.jpeg, (raw = sharp(frame.jpeg).resize({ width: CAPTURE_WIDTH }).raw().toBuffer({ resolveWithObject: true })));
        const { data, info } = await raw;
        const pixels = Buffer.from(data);
        // The serial's 16 bits as black and white pixels: a change no JPEG quantization smooths away.
        for (let bit = 0; bit < 16; bit++) pixels.fill((serial >> bit) & 1 ? 255 : 0, bit * info.channels, (bit + 1) * info.channels);
        return sharp(pixels, { raw: { width: info.width, height: info.height, channels: info.channels } }).jpeg({ quality: 85 + (serial % 10) }).toBuffer();
      }),
    );
    const form = new FormData();
    form.append('timestamps', JSON.stringify(frames.map((frame) => frame.atMs)));
    for (const jpeg of jpegs) form.append('frame', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'frame.jpg');
    return form;
  };
}

interface Decided {
  ms: number;
  refusals: number;
  decided: boolean;
}

/** Frames sent until decided (200), again after each 503's Retry-After; `giveUpMs` after the first send it stops. */
async function decide(server: RunningServer, at: { token: string; attemptId: string }, form: FormData, giveUpMs: number, signal?: AbortSignal, onRefused?: () => void): Promise<Decided> {
  const started = performance.now();
  let refusals = 0;
  for (;;) {
    let answer: Answer;
    try {
      answer = await send(server, `/verify/api/${at.token}/liveness/attempts/${at.attemptId}/frames`, { form, signal });
    } catch (err) {
      // A refusal sent before the form was read closes the connection while the form is still being
      // sent, and the client may then see the connection reset rather than the 503: the page offers
      // "Try again"; here it is a refusal, sent again after 5 s.
      if (signal?.aborted || !(err instanceof TypeError)) throw err;
      answer = { status: 503, body: {}, retryAfterMs: 5000 };
    }
    if (answer.status === 200) return { ms: performance.now() - started, refusals, decided: true };
    if (answer.status !== 503) throw new BenchError(`frames answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`);
    refusals += 1;
    onRefused?.();
    if (performance.now() - started + answer.retryAfterMs > giveUpMs || signal?.aborted) return { ms: performance.now() - started, refusals, decided: false };
    await new Promise((resolve) => setTimeout(resolve, answer.retryAfterMs));
  }
}

interface Tally {
  decided: number;
  refused: number;
}

/** `inFlight` loops, each a fresh session and capture per submission, until `signal` aborts. */
async function attacker(server: RunningServer, secret: string, nin: string, inFlight: number, nextCapture: () => Promise<FormData>, signal: AbortSignal): Promise<Tally> {
  const tally: Tally = { decided: 0, refused: 0 };
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (!signal.aborted) {
        try {
          const at = await attemptFor(server, secret, nin, signal);
          // Refusals counted as they come: the loops still being refused when the attack stops are aborted.
          const result = await decide(server, at, await nextCapture(), Number.POSITIVE_INFINITY, signal, () => (tally.refused += 1));
          if (result.decided) tally.decided += 1;
        } catch (err) {
          if (!signal.aborted) throw err;
        }
      }
    }),
  );
  return tally;
}

interface Setup {
  env: Env;
  live: string;
  test: string;
  victim: string;
  sandboxNin: string;
}

async function setUp(root: string, main: string, dataDir: string): Promise<Setup> {
  // DATABASE_URL empty: the embedded database in VOUCH_DATA_DIR, whatever the bench was given.
  const env: Env = { ...NO_RATE_LIMITS, DATABASE_URL: '', VOUCH_DATA_DIR: dataDir, VOUCH_DEMO: 'off', LOG_LEVEL: 'warn', VOUCH_ALLOW_PRIVATE_URLS: '1', VOUCH_FRAME_UPLOADS_PER_ADDRESS: '1000' };
  const vouch = (...args: string[]) => runCommand(process.execPath, [main, ...args], { cwd: root, env });
  await vouch('migrate', '--json');
  const org = async (name: string, ...options: string[]) => lastJsonLine<{ testSecret: string; liveSecret: string }>(await vouch('org', 'create', '--name', name, ...options, '--json'));
  const test = (await org('Test attacker')).testSecret;
  // Every attacker session is charged its price at the ID step: enough for thousands.
  const live = (await org('Live attacker', '--enable', '--fund', '1000000000')).liveSecret;
  const victim = (await org('Victim', '--enable', '--fund', '1000000000')).liveSecret;
  const file = path.join(dataDir, 'registry.jsonl');
  fs.writeFileSync(file, `${JSON.stringify({ type: 'nin', record: { ...PERSON, photo: fs.readFileSync(fixturePath('genuine-registry.jpg')).toString('base64') } })}\n`);
  await vouch('registry', 'import', file, '--json');
  const identities = JSON.parse(await vouch('test-identities', '--json')) as { nin: { nin: string } };
  return { env, live, test, victim, sandboxNin: identities.nin.nin };
}

export const decisionFairness: Section = {
  name: 'decision-fairness',
  description: `another organization's live liveness decision, idle and while a test account and a live account keep ${ATTACKERS_IN_FLIGHT} frames submissions each in flight (\`vouch serve\`, embedded database${process.env.BENCH_VOUCH_ROOT ? `, the build in ${process.env.BENCH_VOUCH_ROOT}` : ''})`,
  async run(context) {
    const root = process.env.BENCH_VOUCH_ROOT ? path.resolve(process.env.BENCH_VOUCH_ROOT) : context.root;
    const main = path.join(root, 'dist/main.js');
    if (!fs.existsSync(main)) throw new BenchError(`${main} is missing: run npm run build in ${root}`);
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vouch-bench-fairness-'));
    const removeDir = deferCleanup(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    try {
      const setup = await setUp(root, main, dataDir);
      const server = await startServer({ name: 'vouch', command: process.execPath, args: [main, 'serve'], cwd: root, env: setup.env, readyTimeoutMs: 60_000 });
      try {
        const nextCapture = captures();
        const victimDecision = async (giveUpMs: number) => {
          const form = await nextCapture();
          return decide(server, await attemptFor(server, setup.victim, PERSON.nin), form, giveUpMs);
        };
        // The first decision starts the engine's thread and loads its models.
        const firstMs = round((await victimDecision(VICTIM_CEILING_MS)).ms, 0);
        const idle: Decided[] = [];
        for (let i = 0; i < IDLE_ATTEMPTS; i++) idle.push(await victimDecision(VICTIM_CEILING_MS));

        const stop = new AbortController();
        const attackStarted = performance.now();
        const attackers = Promise.all([
          attacker(server, setup.test, setup.sandboxNin, ATTACKERS_IN_FLIGHT, nextCapture, stop.signal),
          attacker(server, setup.live, PERSON.nin, ATTACKERS_IN_FLIGHT, nextCapture, stop.signal),
        ]);
        // Awaited after the victim's attempts; a failure meanwhile must not go unhandled.
        attackers.catch(() => undefined);
        const attacked: Decided[] = [];
        try {
          for (let i = 0; i < VICTIM_ATTEMPTS; i++) {
            const due = RAMP_MS + i * VICTIM_EVERY_MS;
            const now = performance.now() - attackStarted;
            if (now > RAMP_MS + VICTIM_WINDOW_MS) break;
            if (now < due) await new Promise((resolve) => setTimeout(resolve, due - now));
            attacked.push(await victimDecision(VICTIM_CEILING_MS));
          }
        } finally {
          stop.abort();
        }
        const [test, live] = await attackers;
        const attackSeconds = round((performance.now() - attackStarted) / 1000, 0);

        const idleMedian = median(idle.map((d) => d.ms));
        const times = attacked.map((d) => d.ms);
        const attackMedian = median(times);
        const attackMax = Math.max(...times);
        const refusals = attacked.map((d) => d.refusals);
        const undecided = attacked.filter((d) => !d.decided).length;
        const ratio = round(attackMedian / idleMedian, 2);
        const ms = (value: number) => round(value, 0);
        return {
          section: 'decision-fairness',
          table: {
            columns: ['victim decisions', 'attempts', 'median ms', 'max ms', '503s', '÷ idle median'],
            rows: [
              ['first decision (models load)', 1, firstMs, firstMs, 0, ''],
              ['idle', idle.length, ms(idleMedian), ms(Math.max(...idle.map((d) => d.ms))), idle.reduce((sum, d) => sum + d.refusals, 0), 1],
              [`under attack (${attackSeconds} s; ${undecided} undecided)`, attacked.length, ms(attackMedian), ms(attackMax), refusals.reduce((sum, n) => sum + n, 0), ratio],
              ...attacked.map((d, i) => [`  attempt ${i + 1}${d.decided ? '' : ' (given up)'}`, 1, ms(d.ms), ms(d.ms), d.refusals, round(d.ms / idleMedian, 2)]),
              [`test attacker: decided, 503s (${ATTACKERS_IN_FLIGHT} in flight)`, test.decided, '', '', test.refused, ''],
              [`live attacker: decided, 503s (${ATTACKERS_IN_FLIGHT} in flight)`, live.decided, '', '', live.refused, ''],
            ],
          },
          targets: [
            atMost("victim's median decision under attack ÷ idle median", ratio, TARGET_RATIO),
            atMost('503s on one victim attempt, the most', Math.max(...refusals), TARGET_REFUSALS),
            atMost('victim attempts not decided within 100 s', undecided, 0),
          ],
          result: {
            build: root,
            firstMs,
            idle: { attempts: idle.length, medianMs: ms(idleMedian), ms: idle.map((d) => ms(d.ms)) },
            attack: { seconds: attackSeconds, inFlightPerAttacker: ATTACKERS_IN_FLIGHT, victim: attacked.map((d) => ({ ms: ms(d.ms), refusals: d.refusals, decided: d.decided })), medianMs: ms(attackMedian), maxMs: ms(attackMax), ratio, maxRatio: round(attackMax / idleMedian, 2) },
            attackers: { test, live },
          },
        };
      } finally {
        await server.stop();
      }
    } finally {
      await removeDir();
    }
  },
};
