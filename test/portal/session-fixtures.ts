import sharp from 'sharp';
import { expect } from 'vitest';
import type { LivenessFrame } from '../../src/identities/liveness/engine.js';
import { loopCapture } from '../liveness/genuine.js';
import { SANDBOX, tokenOf, type HttpClient } from '../sessions/fixtures.js';

/**
 * Sessions made as a customer and a person make them, for the portal's and the console's
 * session tests: created with the API, then taken through the end-user API (consent, ID, a
 * liveness attempt with real frames) or finished by the test helper.
 */

export const SESSIONS = '/v1/verifications/sessions';
const endUser = (token: string, step = '') => `/verify/api/${token}${step}`;

export interface MadeSession {
  id: string;
  reference: string;
  token: string;
}

export async function createSession(http: HttpClient, secret: string, body: object = {}): Promise<MadeSession> {
  const res = await http.post(SESSIONS, secret, body);
  expect(res.status, res.text).toBe(201);
  const data = res.json().data;
  return { id: data.id, reference: data.reference, token: tokenOf(data.url) };
}

/** Consent given and the sandbox NIN verified: the session waits for its selfie. */
export async function toLiveness(http: HttpClient, session: MadeSession, identity: { idType: string; idNumber: string } = SANDBOX.nin): Promise<void> {
  expect((await http.post(endUser(session.token, '/consent'), undefined, { accepted: true })).status).toBe(200);
  const view = await http.post(endUser(session.token, '/id'), undefined, { idType: identity.idType, idNumber: identity.idNumber });
  expect(view.status, view.text).toBe(200);
  expect(view.json().step).toBe('liveness');
}

/** Re-encoded frames: the same capture with bytes no earlier attempt sent. */
export async function freshFrames(frames: LivenessFrame[], quality: number): Promise<LivenessFrame[]> {
  return Promise.all(frames.map(async (frame) => ({ atMs: frame.atMs, jpeg: await sharp(frame.jpeg).jpeg({ quality }).toBuffer() })));
}

/** A still photo held to the camera, as new bytes (`quality` makes them differ between tests). */
export const stillPhoto = (quality: number) => freshFrames(loopCapture('still-photo.mjpeg', 0), quality);

/** One liveness attempt with `frames`; the view the page gets back and the challenges it was given. */
export async function livenessAttempt(http: HttpClient, session: MadeSession, frames: LivenessFrame[]): Promise<{ view: any; challenges: string[] }> {
  const attempt = await http.post(endUser(session.token, '/liveness/attempts'), undefined, {});
  expect(attempt.status, attempt.text).toBe(201);
  const { attemptId, challenges } = attempt.json();
  const form = new FormData();
  form.append('timestamps', JSON.stringify(frames.map((frame) => frame.atMs)));
  for (const frame of frames) form.append('frame', new Blob([new Uint8Array(frame.jpeg)], { type: 'image/jpeg' }), 'frame.jpg');
  const res = await http.call('POST', endUser(session.token, `/liveness/attempts/${attemptId}/frames`), { form });
  expect(res.status, res.text).toBe(200);
  return { view: res.json(), challenges };
}

/** The test helper's completion (test mode): verified, or failed with a reason. */
export async function completeWithHelper(http: HttpClient, secret: string, session: MadeSession, outcome: 'verified' | 'failed', reason?: string): Promise<void> {
  const res = await http.post(`/v1/test-helpers/sessions/${session.id}/complete`, secret, reason ? { outcome, reason } : { outcome });
  expect(res.status, res.text).toBe(200);
}
