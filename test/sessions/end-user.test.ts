import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/sessions/tokens.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { expectStyleA, httpClient, ID_ONLY, SANDBOX, sessionEvents, tokenOf, type HttpClient } from './fixtures.js';

const BASE = '/v1/verifications/sessions';
const api = (token: string, step = '') => `/verify/api/${token}${step}`;

describe('verification sessions: the end-user API (real sockets)', () => {
  let t: TestContext;
  let http: HttpClient;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-sessions-'));
    t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL, config: { dataDir } });
    http = httpClient(await t.app.listen({ port: 0, host: '127.0.0.1' }));
  });
  afterAll(async () => {
    await t.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  async function newSession(body: object = ID_ONLY, options: { live?: boolean; riskLevel?: 'NONE' | 'LOW' | 'MEDIUM' | 'HIGH' } = {}) {
    const org = await t.org({ riskLevel: options.riskLevel ?? 'NONE', name: 'Kolo Microfinance' });
    const secret = options.live ? org.liveSecret : org.testSecret;
    const res = await http.post(BASE, secret, body);
    expect(res.status, res.text).toBe(201);
    const data = res.json().data;
    return { org, secret, session: data, token: tokenOf(data.url), clientSecret: data.clientSecret as string };
  }

  describe('the view', () => {
    it('shows the consent step with the organization, what is collected and kept, the tries; no-store, no referrer', async () => {
      const { token, session } = await newSession({ redirectUrl: 'https://kolo.example.com/back' });
      const res = await http.get(api(token));
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      const view = res.json();
      expect(view).toMatchObject({
        sessionId: session.id,
        step: 'consent',
        organization: { name: 'Kolo Microfinance', logoUrl: null, colour: null },
        testMode: true,
        idTypes: ['BVN', 'NIN', 'VNIN', 'DRIVERS_LICENSE'],
        prefilled: { idType: null, idNumberMasked: null },
        checks: { liveness: true, faceMatch: true },
        attemptsLeft: { id: 3, liveness: 3 },
        redirectUrl: 'https://kolo.example.com/back',
        expiresAt: session.expiresAt,
        result: null,
        lastAttempt: null,
      });
      expect(view.consent).toMatchObject({ retentionDays: 30, version: 'session-consent-1' });
      expect(view.consent.purpose).toContain('Kolo Microfinance');
      expect(view.consent.collected.join(' ')).toMatch(/photos of your face/);
      expect(view.consent.recipients[0]).toBe('Kolo Microfinance');
      expect(view.idTypeDetails[0]).toEqual({ type: 'BVN', label: 'BVN (Bank Verification Number)', hint: '11 digits' });
      // Nothing the page does not need: no identity, no metadata, no scores.
      expect(Object.keys(view)).not.toContain('identity');
      expect(Object.keys(view)).not.toContain('metadata');
    });

    it('opens with the client secret too, and answers one 404 for every unknown or malformed token', async () => {
      const { token, clientSecret } = await newSession();
      expect((await http.get(api(clientSecret))).json().step).toBe('consent');
      const unknown = [`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, 'short', `vcs_${'x'.repeat(43)}`, 'a'.repeat(500)];
      const messages = new Set<string>();
      for (const bad of unknown) messages.add(expectStyleA(await http.get(api(bad)), 404, 'NOT_FOUND_ERROR').message);
      expect(messages.size).toBe(1);
      expectStyleA(await http.post(api(unknown[0]!, '/consent'), undefined, { accepted: true }), 404, 'NOT_FOUND_ERROR');
      // A path the end-user API does not have is its own 404, never the web app's page.
      expectStyleA(await http.get(api(token, '/nowhere/at/all')), 404, 'NOT_FOUND_ERROR');
      // Nor is its prefix without a token the page of a session whose token would be "api".
      for (const prefix of ['/verify/api', '/verify/api/']) expectStyleA(await http.get(prefix), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.get('/v/abc/def'), 404, 'NOT_FOUND_ERROR');
    });

    it('shows a prefilled ID masked and says the page can skip the ID step', async () => {
      const { token } = await newSession({ ...ID_ONLY, applicant: { idType: 'NIN', idNumber: SANDBOX.nin.idNumber } });
      expect((await http.get(api(token))).json().prefilled).toEqual({ idType: 'NIN', idNumberMasked: '704******61' });
    });
  });

  describe('consent', () => {
    it('records the consent with the time, the address and the text version, and moves to the ID step', async () => {
      const { token, session, secret } = await newSession();
      expectStyleA(await http.post(api(token, '/consent'), undefined, { accepted: false }), 400, 'VALIDATION_ERROR');
      expectStyleA(await http.post(api(token, '/id'), undefined, { idType: 'NIN', idNumber: SANDBOX.nin.idNumber }), 409, 'CONFLICT');
      const res = await http.post(api(token, '/consent'), undefined, { accepted: true });
      expect(res.status).toBe(200);
      expect(res.json().step).toBe('id');
      const record = (await http.get(`${BASE}/${session.id}`, secret)).json().data;
      expect(record.status).toEqual({ status: 'IN_PROGRESS', subStatus: 'AWAITING_ID', state: 'IN_PROGRESS' });
      expect(record.userConsent).toEqual({ acceptedAt: expect.any(String), ip: '127.0.0.1', textVersion: 'session-consent-1' });
      expect(record.startedAt).toBe(record.userConsent.acceptedAt);
      // Accepting again changes nothing.
      expect((await http.post(api(token, '/consent'), undefined, { accepted: true })).json().step).toBe('id');
      expect((await http.get(`${BASE}/${session.id}`, secret)).json().data.userConsent).toEqual(record.userConsent);
    });

    it('looks a prefilled ID up at once: verified, or the session ends (the end user cannot fix it)', async () => {
      const good = await newSession({ ...ID_ONLY, applicant: { idType: 'BVN', idNumber: SANDBOX.bvn.idNumber } });
      expect((await http.post(api(good.token, '/consent'), undefined, { accepted: true })).json()).toMatchObject({ step: 'done', result: { outcome: 'verified' } });
      const bad = await newSession({ ...ID_ONLY, applicant: { idType: 'BVN', idNumber: '22345678900' } });
      const ended = (await http.post(api(bad.token, '/consent'), undefined, { accepted: true })).json();
      expect(ended).toMatchObject({ step: 'done', result: { outcome: 'failed', reasons: ['ID_NOT_FOUND'] }, attemptsLeft: { id: 2 } });
      // And a prefilled ID cannot be replaced by another.
      const other = await newSession({ checks: { liveness: true, faceMatch: false }, applicant: { idType: 'NIN', idNumber: SANDBOX.nin.idNumber } });
      expect((await http.post(api(other.token, '/consent'), undefined, { accepted: true })).json().step).toBe('liveness');
      const third = await newSession({ ...ID_ONLY, applicant: { idType: 'NIN', idNumber: SANDBOX.nin.idNumber } });
      await t.database.db.updateTable('verification_sessions').set({ user_consent: JSON.stringify({ acceptedAt: new Date().toISOString(), ip: '127.0.0.1', textVersion: 'session-consent-1' }), status: 'in_progress' }).where('public_id', '=', third.session.id).execute();
      expect(expectStyleA(await http.post(api(third.token, '/id'), undefined, { idType: 'BVN', idNumber: SANDBOX.bvn.idNumber }), 400, 'VALIDATION_ERROR').message).toMatch(/given by the organization/);
      expect((await http.post(api(third.token, '/id'), undefined, {})).json()).toMatchObject({ step: 'done', result: { outcome: 'verified' } });
    });
  });

  describe('the ID step', () => {
    it('verifies a sandbox ID: done, verified, session.completed queued with the identity found', async () => {
      const { token, session, secret, org } = await newSession();
      await http.post(api(token, '/consent'), undefined, { accepted: true });
      const res = await http.post(api(token, '/id'), undefined, { idType: 'nin', idNumber: ' 7041-2358-961 ' });
      expect(res.status).toBe(200);
      expect(res.json()).toMatchObject({ step: 'done', status: 'verified', result: { outcome: 'verified', reasons: [] } });
      const record = (await http.get(`${BASE}/${session.id}`, secret)).json().data;
      expect(record).toMatchObject({
        status: { state: 'COMPLETED' },
        idType: 'NIN',
        identity: { nin: SANDBOX.nin.idNumber, firstname: 'Babatunde', lastname: 'Adeyemi' },
        checks: { idLookup: { passed: true, idType: 'NIN', attempts: 1, reasons: [] }, liveness: null, faceMatch: null },
      });
      const events = await sessionEvents(t.database.db, org.id);
      expect(events.map((e) => e.type)).toEqual(['session.completed']);
      expect(events[0]!.payload!.data).toEqual(record);
    });

    it('answers 400 for malformed input (no try spent) and 422 ID_NOT_VERIFIED with the tries left; the third failure ends it', async () => {
      const { token, session, secret } = await newSession({ ...ID_ONLY, idTypes: ['NIN', 'BVN'] });
      await http.post(api(token, '/consent'), undefined, { accepted: true });
      expect(expectStyleA(await http.post(api(token, '/id'), undefined, { idType: 'NIN', idNumber: '123' }), 400, 'VALIDATION_ERROR').message).toMatch(/11 digits/);
      expect(expectStyleA(await http.post(api(token, '/id'), undefined, { idType: 'DRIVERS_LICENSE', idNumber: SANDBOX.license.idNumber }), 400, 'VALIDATION_ERROR').message).toMatch(/one of NIN, BVN/);
      expectStyleA(await http.post(api(token, '/id'), undefined, { idType: 'NIN' }), 400, 'VALIDATION_ERROR');
      expectStyleA(await http.post(api(token, '/id'), undefined, { idType: 'NIN', idNumber: 12345678901 }), 400, 'VALIDATION_ERROR');
      const first = await http.post(api(token, '/id'), undefined, { idType: 'NIN', idNumber: '70412358960' });
      expect(first.status).toBe(422);
      expect(first.json()).toEqual({ status: 'error', code: 'ID_NOT_VERIFIED', message: expect.stringMatching(/2 tries left/), attemptsLeft: 2 , requestId: expect.stringMatching(/^req_/) });
      expect((await http.get(api(token))).json()).toMatchObject({ step: 'id', attemptsLeft: { id: 2 } });
      expect((await http.post(api(token, '/id'), undefined, { idType: 'BVN', idNumber: '22345678900' })).json().attemptsLeft).toBe(1);
      const last = await http.post(api(token, '/id'), undefined, { idType: 'NIN', idNumber: '70412358962' });
      expect(last.status).toBe(200);
      expect(last.json()).toMatchObject({ step: 'done', result: { outcome: 'failed', reasons: ['ID_NOT_FOUND', 'ID_ATTEMPTS_EXHAUSTED'] }, attemptsLeft: { id: 0 } });
      const record = (await http.get(`${BASE}/${session.id}`, secret)).json().data;
      expect(record).toMatchObject({ status: { status: 'NOT_VERIFIED', subStatus: 'ID_NOT_FOUND', state: 'FAILED' }, checks: { idLookup: { passed: false, attempts: 3 } }, identity: null });
      expectStyleA(await http.post(api(token, '/id'), undefined, { idType: 'NIN', idNumber: SANDBOX.nin.idNumber }), 409, 'CONFLICT');
    });

    it('matches the prefilled names as the risk level says: a real ID of someone else is not verified', async () => {
      const { token, session, secret } = await newSession({ ...ID_ONLY, applicant: { firstname: 'Chioma', lastname: 'Okafor' } }, { riskLevel: 'MEDIUM' });
      await http.post(api(token, '/consent'), undefined, { accepted: true });
      const res = await http.post(api(token, '/id'), undefined, { idType: 'NIN', idNumber: SANDBOX.nin.idNumber });
      expect(res.status).toBe(422);
      // The session paid its price with this first lookup, so why a try failed is the customer's
      // to read at once (the person's page tells neither apart).
      expect((await http.get(`${BASE}/${session.id}`, secret)).json().data.checks.idLookup).toEqual({
        passed: false,
        idType: 'NIN',
        attempts: 1,
        reasons: ['ID_DETAILS_MISMATCH'],
        fieldMatches: { firstname: false, lastname: false, dob: false },
      });
      for (let i = 0; i < 2; i++) await http.post(api(token, '/id'), undefined, { idType: 'NIN', idNumber: SANDBOX.nin.idNumber });
      const record = (await http.get(`${BASE}/${session.id}`, secret)).json().data;
      expect(record.checks.idLookup).toMatchObject({ passed: false, reasons: ['ID_DETAILS_MISMATCH', 'ID_ATTEMPTS_EXHAUSTED'], fieldMatches: { firstname: false, lastname: false, dob: false } });
      const ok = await newSession({ ...ID_ONLY, applicant: { firstname: 'babatunde', lastname: 'ADEYEMI' } }, { riskLevel: 'MEDIUM' });
      await http.post(api(ok.token, '/consent'), undefined, { accepted: true });
      expect((await http.post(api(ok.token, '/id'), undefined, { idType: 'NIN', idNumber: SANDBOX.nin.idNumber })).json().result.outcome).toBe('verified');
    });

    it('counts concurrent submissions against the same three tries, one lookup at a time', async () => {
      const { token, session } = await newSession();
      await http.post(api(token, '/consent'), undefined, { accepted: true });
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => http.post(api(token, '/id'), undefined, { idType: 'BVN', idNumber: `2234567891${i}` })));
      const codes = answers.map((a) => a.status);
      // Each try is counted, and the lookup reserved, before the registry is asked: one lookup at
      // a time and never more than three, whatever the interleaving; the others are refused (409
      // while one is in flight or once it has ended, 429 no tries left).
      expect(codes.every((c) => [200, 409, 422, 429].includes(c))).toBe(true);
      const looked = codes.filter((c) => c === 422 || c === 200).length;
      expect(looked).toBeGreaterThanOrEqual(1);
      const row = () => t.database.db.selectFrom('verification_sessions').select(['id_attempts', 'status']).where('public_id', '=', session.id).executeTakeFirstOrThrow();
      expect((await row()).id_attempts).toBe(looked);
      for (let i = looked; i < 3; i++) await http.post(api(token, '/id'), undefined, { idType: 'BVN', idNumber: `2234567892${i}` });
      expect(await row()).toEqual({ id_attempts: 3, status: 'failed' });
      expect((await http.get(api(token))).json()).toMatchObject({ step: 'done', attemptsLeft: { id: 0 } });
    });
  });

  describe('liveness attempts', () => {
    async function atLiveness() {
      const created = await newSession({ checks: { liveness: true, faceMatch: true } });
      await http.post(api(created.token, '/consent'), undefined, { accepted: true });
      const view = (await http.post(api(created.token, '/id'), undefined, { idType: 'NIN', idNumber: SANDBOX.nin.idNumber })).json();
      expect(view.step).toBe('liveness');
      return created;
    }

    it('refuses an attempt before the ID is verified (409)', async () => {
      const { token } = await newSession({ checks: { liveness: true, faceMatch: false } });
      expectStyleA(await http.post(api(token, '/liveness/attempts'), undefined, {}), 409, 'CONFLICT');
      const idOnly = await newSession();
      await http.post(api(idOnly.token, '/consent'), undefined, { accepted: true });
      expectStyleA(await http.post(api(idOnly.token, '/liveness/attempts'), undefined, {}), 409, 'CONFLICT');
    });

    it('gives 2–3 server-chosen challenges bound to the attempt, the same open attempt again, and 429 after three', async () => {
      const { token } = await atLiveness();
      const first = await http.post(api(token, '/liveness/attempts'), undefined, {});
      expect(first.status).toBe(201);
      const attempt = first.json();
      expect(attempt).toMatchObject({ attemptId: expect.stringMatching(/^att_[0-9a-f]{24}$/), capture: { maxFrames: expect.any(Number), frameIntervalMs: expect.any(Number), maxWidth: expect.any(Number) } });
      expect(attempt.challenges.length).toBeGreaterThanOrEqual(2);
      expect(attempt.challenges.length).toBeLessThanOrEqual(3);
      expect(new Set(attempt.challenges).size).toBe(attempt.challenges.length);
      expect(Date.parse(attempt.expiresAt)).toBeGreaterThan(Date.now());
      // A reloaded page gets the open attempt back, not a new try.
      expect((await http.post(api(token, '/liveness/attempts'), undefined, {})).json()).toEqual(attempt);
      // Expire it (its time passes), twice more, then the session is out of tries.
      for (let i = 0; i < 3; i++) {
        await t.database.db.updateTable('session_liveness_attempts').set({ expires_at: new Date(Date.now() - 1000) }).where('status', '=', 'open').execute();
        const next = await http.post(api(token, '/liveness/attempts'), undefined, {});
        if (i < 2) {
          expect(next.status).toBe(201);
          expect(next.json().attemptId).not.toBe(attempt.attemptId);
        } else {
          expectStyleA(next, 429, 'TOO_MANY_ATTEMPTS');
        }
      }
      expect((await http.get(api(token))).json()).toMatchObject({ step: 'done', attemptsLeft: { liveness: 0 }, result: { outcome: 'failed', reasons: ['LIVENESS_ATTEMPTS_EXHAUSTED'] } });
    });

    it('checks the frames form: multipart only, JPEG frames, one timestamp each, size limits, a known attempt', async () => {
      const { token } = await atLiveness();
      const { attemptId } = (await http.post(api(token, '/liveness/attempts'), undefined, {})).json();
      const frames = api(token, `/liveness/attempts/${attemptId}/frames`);
      const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#888' } }).jpeg().toBuffer();
      const form = (timestamps: unknown, files: Buffer[], name = 'frame') => {
        const data = new FormData();
        if (timestamps !== undefined) data.append('timestamps', typeof timestamps === 'string' ? timestamps : JSON.stringify(timestamps));
        for (const file of files) data.append(name, new Blob([new Uint8Array(file)], { type: 'image/jpeg' }), 'f.jpg');
        return data;
      };
      expectStyleA(await http.call('POST', frames, { body: { timestamps: [0] } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(expectStyleA(await http.call('POST', frames, { form: form([0], []) }), 400, 'VALIDATION_ERROR').message).toMatch(/frame/);
      expect(expectStyleA(await http.call('POST', frames, { form: form(undefined, [jpeg]) }), 400, 'VALIDATION_ERROR').message).toMatch(/timestamps is required/);
      expect(expectStyleA(await http.call('POST', frames, { form: form('[0,', [jpeg]) }), 400, 'VALIDATION_ERROR').message).toMatch(/JSON array/);
      expect(expectStyleA(await http.call('POST', frames, { form: form([0, 200], [jpeg]) }), 400, 'VALIDATION_ERROR').message).toMatch(/one number per frame/);
      expect(expectStyleA(await http.call('POST', frames, { form: form([200, 0], [jpeg, jpeg]) }), 400, 'VALIDATION_ERROR').message).toMatch(/in order/);
      expect(expectStyleA(await http.call('POST', frames, { form: form([0], [Buffer.from('not a jpeg at all')]) }), 400, 'VALIDATION_ERROR').message).toMatch(/not a JPEG/);
      expectStyleA(await http.call('POST', frames, { form: form([0], [jpeg], 'photo') }), 400, 'VALIDATION_ERROR');
      expectStyleA(await http.call('POST', frames, { form: form([0], [Buffer.concat([jpeg, Buffer.alloc(310 * 1024)])]) }), 413, 'PAYLOAD_TOO_LARGE');
      expectStyleA(await http.call('POST', api(token, '/liveness/attempts/att_000000000000000000000000/frames'), { form: form([0], [jpeg]) }), 404, 'NOT_FOUND_ERROR');
      expectStyleA(await http.call('POST', api(token, '/liveness/attempts/nope/frames'), { form: form([0], [jpeg]) }), 404, 'NOT_FOUND_ERROR');
      // Nothing was decided or stored: the attempt is still open, no frame kept.
      expect((await http.get(api(token))).json()).toMatchObject({ step: 'liveness', lastAttempt: null });
      expect(await t.database.db.selectFrom('session_frames').select('attempt_id').where('attempt_id', '=', attemptId).execute()).toEqual([]);
    });
  });

  describe('cancel and handoff', () => {
    it('lets the end user cancel: done, cancelled by the user, no webhook; every later step is 409', async () => {
      const { token, org } = await newSession();
      const res = await http.post(api(token, '/cancel'), undefined, {});
      expect(res.json()).toMatchObject({ step: 'done', status: 'cancelled', result: { outcome: 'failed', reasons: ['CANCELLED'] } });
      expectStyleA(await http.post(api(token, '/cancel'), undefined, {}), 409, 'CONFLICT');
      expectStyleA(await http.post(api(token, '/handoff'), undefined, {}), 409, 'CONFLICT');
      expectStyleA(await http.post(api(token, '/liveness/attempts'), undefined, {}), 409, 'CONFLICT');
      expect(await sessionEvents(t.database.db, org.id)).toEqual([]);
    });

    it('hands off to another device: a 10-character short link and QR code; /v/:code redirects (303) with a token of its own', async () => {
      const { token, session } = await newSession();
      const res = await http.post(api(token, '/handoff'), undefined, {});
      expect(res.status).toBe(201);
      const handoff = res.json();
      expect(handoff.shortUrl).toMatch(/^http:\/\/127\.0\.0\.1:8080\/v\/[a-z2-9]{10}$/);
      expect(handoff.qrSvg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
      expect(Date.parse(handoff.expiresAt) - Date.now()).toBeGreaterThan(14 * 60_000);
      const code = handoff.shortUrl.split('/v/')[1];
      const redirect = await http.get(`/v/${code}`);
      expect(redirect.status).toBe(303);
      const location = redirect.headers.get('location')!;
      const phoneToken = tokenOf(location);
      expect(phoneToken).not.toBe(token);
      // The phone's token opens the same session, and only its hash is kept (the code's too).
      expect((await http.get(api(phoneToken))).json().sessionId).toBe(session.id);
      const tokens = await t.database.db.selectFrom('session_tokens').select(['token_hash', 'kind']).execute();
      expect(tokens).toContainEqual({ token_hash: hashToken(phoneToken), kind: 'handoff' });
      expect(JSON.stringify(await t.database.db.selectFrom('session_handoffs').selectAll().execute())).not.toContain(code);
      // A code works once: opened again (a link preview, someone who saw the QR code), it is the
      // page saying the link does not work, and no token is made.
      const tokensMade = (await t.database.db.selectFrom('session_tokens').select('token_hash').execute()).length;
      const again = await http.get(`/v/${code}`);
      expect(again.status).toBe(404);
      expect(again.text).toMatch(/does not work any more/);
      expect((await t.database.db.selectFrom('session_tokens').select('token_hash').execute()).length).toBe(tokensMade);
      // The desktop sees the phone's progress.
      await http.post(api(phoneToken, '/consent'), undefined, { accepted: true });
      expect((await http.get(api(token))).json().step).toBe('id');
      // Unknown, malformed and expired codes: a page saying the link does not work.
      for (const bad of ['aaaaaaaaaa', 'short', 'AAAAAAAAAA']) {
        const answer = await http.get(`/v/${bad}`);
        expect(answer.status).toBe(404);
        expect(answer.headers.get('content-type')).toMatch(/text\/html/);
        expect(answer.text).toMatch(/does not work any more/);
      }
      const late = (await http.post(api(token, '/handoff'), undefined, {})).json().shortUrl.split('/v/')[1];
      await t.database.db.updateTable('session_handoffs').set({ expires_at: new Date(Date.now() - 1) }).execute();
      expect((await http.get(`/v/${late}`)).status).toBe(404);
    });

    it('a handoff code opened several times at once makes one token', async () => {
      const { token } = await newSession();
      const code = (await http.post(api(token, '/handoff'), undefined, {})).json().shortUrl.split('/v/')[1];
      const answers = await Promise.all(Array.from({ length: 5 }, () => http.get(`/v/${code}`)));
      expect(answers.map((answer) => answer.status).sort()).toEqual([303, 404, 404, 404, 404]);
    });

    it('limits live handoff codes per session', async () => {
      const { token } = await newSession();
      for (let i = 0; i < 5; i++) expect((await http.post(api(token, '/handoff'), undefined, {})).status).toBe(201);
      expectStyleA(await http.post(api(token, '/handoff'), undefined, {}), 429, 'TOO_MANY_ATTEMPTS');
    });
  });

  describe('expiry and secrecy', () => {
    it('expires a session the moment its link is used late, and the link dies an hour after the end', async () => {
      const { token, session, secret, org } = await newSession();
      await t.database.db.updateTable('verification_sessions').set({ expires_at: new Date(Date.now() - 1000) }).where('public_id', '=', session.id).execute();
      expect((await http.get(api(token))).json()).toMatchObject({ step: 'done', status: 'expired', result: { reasons: ['EXPIRED'] } });
      expect((await http.get(`${BASE}/${session.id}`, secret)).json().data.status.state).toBe('EXPIRED');
      expect((await sessionEvents(t.database.db, org.id)).map((e) => e.type)).toEqual(['session.expired']);
      await t.database.db.updateTable('verification_sessions').set({ expired_at: new Date(Date.now() - 61 * 60_000) }).where('public_id', '=', session.id).execute();
      expectStyleA(await http.get(api(token)), 404, 'NOT_FOUND_ERROR');
    });

    it('never writes a token, client secret or handoff code to the log', async () => {
      const { token, clientSecret } = await newSession();
      await http.get(api(clientSecret));
      const handoff = (await http.post(api(token, '/handoff'), undefined, {})).json();
      const code = handoff.shortUrl.split('/v/')[1];
      await http.get(`/v/${code}`);
      await http.get(api(token, '/nowhere/at/all'));
      const logs = t.logs.join('\n');
      expect(logs).toContain('/verify/api/');
      expect(logs).toContain('/v/[redacted]');
      for (const secret of [token, clientSecret, clientSecret.slice(4), code]) expect(logs).not.toContain(secret);
    });
  });

  describe('rate limit', () => {
    it('limits the end-user API per client address', async () => {
      const limited = await buildTestContext({ config: { rateLimits: { perSecret: 1000, perAddress: 5 } } });
      try {
        const client = httpClient(await limited.app.listen({ port: 0, host: '127.0.0.1' }));
        const codes: number[] = [];
        for (let i = 0; i < 7; i++) codes.push((await client.get(api('x'.repeat(43)))).status);
        expect(codes).toEqual([404, 404, 404, 404, 404, 429, 429]);
        const refused = await client.get(api('x'.repeat(43)));
        expect(refused.json()).toMatchObject({ status: 'error', code: 'RATE_LIMITED' });
        expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      } finally {
        await limited.close();
      }
    });
  });
});
