import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LivenessFrame } from '../../src/identities/liveness/engine.js';
import { REASON_TEXT } from '../../src/portal/verifications/session-words.js';
import { SESSION_REASONS } from '../../src/sessions/states.js';
import { buildTestContext, NOWHERE_WEBHOOK_URL, type TestContext } from '../helpers/app.js';
import { addMember, portal, portalUser, type PortalUser } from '../helpers/portal.js';
import { httpClient, SANDBOX, type HttpClient } from '../sessions/fixtures.js';
import { completeWithHelper, createSession, livenessAttempt, stillPhoto, toLiveness } from './session-fixtures.js';

/**
 * Verification sessions in the portal's verifications explorer: the list (filters, paging, modes,
 * organizations kept apart), a session's page (steps, the ID found masked, attempts with their
 * challenges and results, reasons in plain English, webhook deliveries), and its frames, blurred
 * for everyone and revealed only to roles that act on verifications, each view access-logged.
 */
let t: TestContext;
let http: HttpClient;
let dataDir: string;

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'vouch-portal-sessions-'));
  t = await buildTestContext({ webhookUrl: NOWHERE_WEBHOOK_URL, config: { dataDir } });
  http = httpClient(await t.app.listen({ port: 0, host: '127.0.0.1' }));
}, 120_000);
afterAll(async () => {
  await t?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

/** An organization (with webhook endpoints in both modes) and a signed-in member of each role asked for. */
async function orgWith(name: string) {
  const org = await t.org({ name, fund: 100_000 });
  const owner = await portalUser(t.database.db);
  await addMember(t.database.db, org.id, owner.personId, 'owner');
  const viewer = await portalUser(t.database.db);
  await addMember(t.database.db, org.id, viewer.personId, 'viewer');
  return { org, owner, viewer };
}

const get = (user: PortalUser | undefined, url: string) => portal(t.app, user, { method: 'GET', url });

async function accessRows(orgId: string) {
  return t.database.db
    .selectFrom('personal_data_access_records')
    .select(['actor_id', 'channel', 'action', 'resource', 'resource_id', 'mode'])
    .where('org_id', '=', orgId)
    .where('resource', '=', 'session')
    .orderBy('id')
    .orderBy('position')
    .execute();
}

describe('sessions in the explorer', () => {
  it('the words for every reason code are written', () => {
    expect(Object.keys(REASON_TEXT).sort()).toEqual([...SESSION_REASONS].sort());
  });

  it('lists the mode’s sessions newest first with filters and paging, masked, each row access-logged; other organizations and modes stay out', async () => {
    const { org, owner } = await orgWith('Kolo Microfinance');
    const other = await orgWith('Ikeja Loans');
    const first = await createSession(http, org.testSecret, { reference: 'kolo-ref-1', applicant: { ...SANDBOX.bvn }, checks: { liveness: false, faceMatch: false } });
    const second = await createSession(http, org.testSecret, { reference: 'kolo-ref-2' });
    const third = await createSession(http, org.testSecret, { reference: 'other-3' });
    await completeWithHelper(http, org.testSecret, first, 'verified');
    await completeWithHelper(http, org.testSecret, second, 'failed', 'FACE_MISMATCH');
    const live = await createSession(http, org.liveSecret, { reference: 'live-1' });
    await createSession(http, other.org.testSecret, { reference: 'kolo-ref-elsewhere' });

    const res = await get(owner, `/api/orgs/${org.id}/sessions?mode=test`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ total: 3, totalCapped: false, limit: 20, offset: 0 });
    expect(body.data.map((row: { reference: string }) => row.reference)).toEqual(['other-3', 'kolo-ref-2', 'kolo-ref-1']);
    expect(body.data.map((row: { status: string }) => row.status)).toEqual(['created', 'failed', 'verified']);
    expect(body.data[1].subStatus).toBe(REASON_TEXT.FACE_MISMATCH);
    // The prefilled number is masked, the name shown.
    expect(body.data[2].subject).toBe('BVN 223******01 · Adaeze Okonkwo');
    expect(res.body).not.toContain(SANDBOX.bvn.idNumber);
    expect(body.data[0].endedAt).toBeNull();

    const paged = (await get(owner, `/api/orgs/${org.id}/sessions?mode=test&limit=2&offset=2`)).json();
    expect(paged.data.map((row: { id: string }) => row.id)).toEqual([first.id]);
    const filtered = async (query: string) => (await get(owner, `/api/orgs/${org.id}/sessions?mode=test&${query}`)).json();
    expect((await filtered('status=verified')).data.map((row: { id: string }) => row.id)).toEqual([first.id]);
    expect((await filtered('status=in_progress')).data.map((row: { id: string }) => row.id)).toEqual([third.id]);
    expect((await filtered('status=expired')).total).toBe(0);
    expect((await filtered('q=kolo-ref')).data.map((row: { id: string }) => row.id)).toEqual([second.id, first.id]);
    expect((await filtered(`q=${second.id}`)).data.map((row: { id: string }) => row.id)).toEqual([second.id]);
    // A wildcard is a character, not a pattern.
    expect((await filtered('q=%25')).total).toBe(0);

    const liveList = (await get(owner, `/api/orgs/${org.id}/sessions?mode=live`)).json();
    expect(liveList.data.map((row: { id: string }) => row.id)).toEqual([live.id]);
    // Another organization's list has only its own; its member cannot read this one's.
    expect((await get(other.owner, `/api/orgs/${other.org.id}/sessions?mode=test`)).json().data.map((row: { reference: string }) => row.reference)).toEqual(['kolo-ref-elsewhere']);
    expect((await get(other.owner, `/api/orgs/${org.id}/sessions?mode=test`)).statusCode).toBe(404);

    // One list row per session shown, the member named; nothing about the other organization's.
    const logged = await accessRows(org.id);
    expect(logged.filter((row) => row.action === 'list' && row.mode === 'test').slice(0, 3).map((row) => row.resource_id)).toEqual([third.id, second.id, first.id]);
    expect(logged.every((row) => row.channel === 'portal' && row.actor_id === owner.personId)).toBe(true);
  });

  it('answers bad input in the portal’s style and refuses the signed-out', async () => {
    const { org, owner } = await orgWith('Style Bank');
    const unauth = await get(undefined, `/api/orgs/${org.id}/sessions`);
    expect(unauth.statusCode).toBe(401);
    expect(unauth.json()).toMatchObject({ status: 'error', code: 'ACCESS_DENIED' });
    for (const query of ['status=done', 'limit=0', 'limit=101', 'mode=prod', 'offset=-1']) {
      const res = await get(owner, `/api/orgs/${org.id}/sessions?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', code: 'VALIDATION_ERROR' });
    }
    const deep = await get(owner, `/api/orgs/${org.id}/sessions?status=failed&offset=10001`);
    expect(deep.statusCode).toBe(400);
    expect(deep.json().message).toMatch(/offset can be at most/);
    for (const id of ['nope', 'ses_0000000000000000000g', 'ses_00000000000000000000']) {
      const res = await get(owner, `/api/orgs/${org.id}/sessions/${id}`);
      expect(res.statusCode, id).toBe(404);
      expect(res.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND_ERROR' });
    }
  });

  it('shows a completed session’s steps, the ID found (masked), checks, reasons in words and webhook deliveries; the view is logged', async () => {
    const { org, owner, viewer } = await orgWith('Detail Bank');
    const other = await orgWith('Nosy Bank');
    const session = await createSession(http, org.testSecret, { reference: 'detail-1', applicant: { firstname: 'Adaeze', lastname: 'Okonkwo' } });
    await toLiveness(http, session, SANDBOX.bvn);
    await completeWithHelper(http, org.testSecret, session, 'failed', 'FACE_MISMATCH');

    const res = await get(viewer, `/api/orgs/${org.id}/sessions/${session.id}?mode=test`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.body).not.toContain(SANDBOX.bvn.idNumber);
    const d = res.json();
    expect(d).toMatchObject({
      id: session.id,
      reference: 'detail-1',
      status: 'failed',
      statusText: 'NOT_VERIFIED',
      subStatus: 'FACE_MISMATCH',
      subStatusText: REASON_TEXT.FACE_MISMATCH,
      requestedChecks: { liveness: true, faceMatch: true },
      identity: { idType: 'BVN', idTypeText: 'BVN', idNumber: '223******01' },
      consent: { textVersion: 'session-consent-1' },
      idCheck: { passed: true, tries: 1, reasons: [] },
      faceMatch: { passed: false, simulated: true, reasons: [{ code: 'FACE_MISMATCH', text: REASON_TEXT.FACE_MISMATCH }] },
      reasons: [{ code: 'FACE_MISMATCH', text: REASON_TEXT.FACE_MISMATCH }],
      canRevealFrames: false,
      attempts: [],
      anonymised: false,
    });
    expect(d.identity.facts).toEqual([{ label: 'Name', value: 'Adaeze Chiamaka Okonkwo' }, { label: 'Date of birth', value: '14-03-1990' }, { label: 'Gender', value: 'Female' }]);
    expect(JSON.stringify(d.identity)).not.toMatch(/photo|base64/i);
    expect(d.prefilled).toEqual([{ label: 'Name', value: 'Adaeze Okonkwo' }]);
    expect(d.steps.map((s: { step: string }) => s.step)).toEqual(['created', 'opened', 'consent', 'id', 'liveness', 'face_match', 'failed'].filter((s) => s !== 'liveness' || d.attempts.length > 0));
    expect(d.steps.find((s: { step: string }) => s.step === 'consent').detail).toContain('session-consent-1');
    expect(d.steps.find((s: { step: string }) => s.step === 'face_match').detail).toContain(REASON_TEXT.FACE_MISMATCH);
    expect(d.deliveries.map((w: { type: string }) => w.type)).toEqual(['session.completed']);
    expect((await get(owner, `/api/orgs/${org.id}/sessions/${session.id}?mode=test`)).json().canRevealFrames).toBe(true);

    const views = (await accessRows(org.id)).filter((row) => row.action === 'view');
    expect(views.map((row) => [row.actor_id, row.resource_id, row.mode])).toEqual([
      [viewer.personId, session.id, 'test'],
      [owner.personId, session.id, 'test'],
    ]);

    // The other mode, another organization's path and another organization's member: 404, nothing logged.
    expect((await get(owner, `/api/orgs/${org.id}/sessions/${session.id}?mode=live`)).statusCode).toBe(404);
    expect((await get(other.owner, `/api/orgs/${other.org.id}/sessions/${session.id}?mode=test`)).statusCode).toBe(404);
    expect((await get(other.owner, `/api/orgs/${org.id}/sessions/${session.id}?mode=test`)).statusCode).toBe(404);
    expect((await accessRows(org.id)).filter((row) => row.action === 'view')).toHaveLength(2);
    expect(await accessRows(other.org.id)).toEqual([]);
  });

  describe('liveness attempts and their frames', { timeout: 120_000 }, () => {
    let made: Awaited<ReturnType<typeof orgWith>>;
    let session: Awaited<ReturnType<typeof createSession>>;
    let frames: LivenessFrame[];
    let asked: string[];

    beforeAll(async () => {
      made = await orgWith('Frames Bank');
      session = await createSession(http, made.org.testSecret, { reference: 'frames-1' });
      await toLiveness(http, session);
      frames = await stillPhoto(91);
      const { view, challenges } = await livenessAttempt(http, session, frames);
      expect(view.lastAttempt.passed).toBe(false);
      asked = challenges;
    }, 120_000);

    it('shows each attempt with its challenge sequence, each challenge’s result, the reasons in words and its frames', async () => {
      const d = (await get(made.owner, `/api/orgs/${made.org.id}/sessions/${session.id}?mode=test`)).json();
      expect(d.status).toBe('in_progress');
      expect(d.subStatusText).toBe('Waiting for the selfie (liveness)');
      expect(d.attempts).toHaveLength(1);
      const attempt = d.attempts[0];
      expect(attempt).toMatchObject({ number: 1, status: 'failed' });
      expect(attempt.challenges.map((c: { challenge: string }) => c.challenge)).toEqual(asked);
      for (const c of attempt.challenges) {
        expect(typeof c.passed).toBe('boolean');
        expect(c.text).not.toBe(c.challenge);
      }
      expect(attempt.reasons.length).toBeGreaterThan(0);
      for (const reason of attempt.reasons) expect(reason.text).toBe(REASON_TEXT[reason.code as keyof typeof REASON_TEXT]);
      expect(attempt.frames).toHaveLength(frames.length);
      expect(attempt.frames.every((f: { stored: boolean }) => f.stored)).toBe(true);
      expect(attempt.frames.map((f: { atMs: number }) => f.atMs)).toEqual(frames.map((f) => f.atMs));
      expect(d.steps.find((s: { step: string }) => s.step === 'liveness').title).toBe('Liveness attempt 1 failed');
    });

    it('serves a frame blurred to anyone who may read (not logged), and as taken only to roles that act on verifications (logged)', async () => {
      const { org, owner, viewer } = made;
      const frameUrl = (position: number, view?: string) => `/api/orgs/${org.id}/sessions/${session.id}/attempts/1/frames/${position}?mode=test${view ? `&view=${view}` : ''}`;
      const before = (await accessRows(org.id)).length;

      const blurred = await get(viewer, frameUrl(3));
      expect(blurred.statusCode).toBe(200);
      expect(blurred.headers['content-type']).toBe('image/jpeg');
      expect(blurred.headers['cache-control']).toBe('private, no-store');
      const meta = await sharp(blurred.rawPayload).metadata();
      expect(meta.width).toBe(160);
      expect(blurred.rawPayload.equals(frames[3]!.jpeg)).toBe(false);
      expect((await accessRows(org.id)).length).toBe(before);

      const refused = await get(viewer, frameUrl(3, 'full'));
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ status: 'error', code: 'FORBIDDEN' });
      expect((await accessRows(org.id)).length).toBe(before);

      const full = await get(owner, frameUrl(3, 'full'));
      expect(full.statusCode).toBe(200);
      expect(full.rawPayload.equals(frames[3]!.jpeg)).toBe(true);
      const rows = await accessRows(org.id);
      expect(rows.slice(before)).toEqual([{ actor_id: owner.personId, channel: 'portal', action: 'view', resource: 'session', resource_id: session.id, mode: 'test' }]);

      // No such frame, attempt, mode or organization: 404, nothing shown, nothing logged.
      for (const url of [frameUrl(999, 'full'), frameUrl(-1, 'full'), `/api/orgs/${org.id}/sessions/${session.id}/attempts/2/frames/0?mode=test&view=full`, frameUrl(3, 'full').replace('mode=test', 'mode=live')]) {
        expect((await get(owner, url)).statusCode, url).toBe(404);
      }
      const other = await orgWith('Peeking Bank');
      expect((await get(other.owner, frameUrl(3, 'full'))).statusCode).toBe(404);
      expect((await get(other.owner, frameUrl(3, 'full').replace(org.id, other.org.id))).statusCode).toBe(404);
      expect((await get(undefined, frameUrl(3))).statusCode).toBe(401);
      expect((await get(owner, frameUrl(3, 'raw'))).statusCode).toBe(400);
      expect((await accessRows(org.id)).length).toBe(before + 1);
    });

    it('a frame deleted by retention is shown as gone', async () => {
      const attempt = await t.database.db.selectFrom('session_liveness_attempts').select('id').where('session_id', '=', (await t.database.db.selectFrom('verification_sessions').select('id').where('public_id', '=', session.id).executeTakeFirstOrThrow()).id).executeTakeFirstOrThrow();
      await t.database.db.updateTable('session_frames').set({ file_id: null }).where('attempt_id', '=', attempt.id).where('position', '=', 0).execute();
      const d = (await get(made.owner, `/api/orgs/${made.org.id}/sessions/${session.id}?mode=test`)).json();
      expect(d.attempts[0].frames[0].stored).toBe(false);
      const res = await get(made.owner, `/api/orgs/${made.org.id}/sessions/${session.id}/attempts/1/frames/0?mode=test`);
      expect(res.statusCode).toBe(404);
      expect(res.json().message).toMatch(/retention/);
    });

    it('a frame sent as bytes that do not decode is answered in the portal’s style, blurred or as taken', async () => {
      const { org, owner, viewer } = made;
      const broken = (await stillPhoto(87)).map((frame, i) => (i === 2 ? { atMs: frame.atMs, jpeg: frame.jpeg.subarray(0, 300) } : frame));
      await livenessAttempt(http, session, broken);
      const frameUrl = (position: number, view?: string) => `/api/orgs/${org.id}/sessions/${session.id}/attempts/2/frames/${position}?mode=test${view ? `&view=${view}` : ''}`;
      for (const user of [viewer, owner]) {
        const res = await get(user, frameUrl(2));
        expect(res.statusCode, res.body).toBe(422);
        expect(res.json()).toMatchObject({ status: 'error', code: 'UNPROCESSABLE' });
        expect(res.json().message).toMatch(/does not decode/);
        expect((await get(user, frameUrl(3))).statusCode).toBe(200);
      }
      // As taken, the owner gets the bytes the device sent, logged like any other frame.
      const full = await get(owner, frameUrl(2, 'full'));
      expect(full.statusCode).toBe(200);
      expect(full.rawPayload.equals(broken[2]!.jpeg)).toBe(true);
    });
  });
});
