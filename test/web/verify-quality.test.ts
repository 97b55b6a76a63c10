import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_IDENTITY_KEYS } from '../../src/identities/registry/test-identities.js';
import { qualityText } from '../../web/verify/src/words.js';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { consentAndId, createSession, launchWithCamera, noOverflow, phoneContext } from './verify-helpers.js';

/**
 * Frames too poor to compare with the ID photo (the face match's quality gate, issue 50 part 4)
 * send the person back to the selfie saying what was wrong with the picture and what to do, not
 * the generic reason. The attempt's decision is written as the server writes one (the decision
 * itself is test/sessions/face-frames.test.ts's); the page is read in Chromium at phone width.
 */

let web: WebContext;
let browser: Browser;

beforeAll(async () => {
  web = await buildWebContext();
  browser = await launchWithCamera(null);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await web?.close();
});

describe('the selfie step after frames too poor to compare', () => {
  it('says what was wrong with the picture, in plain words, with the tries left', { timeout: 180_000 }, async () => {
    const org = await web.org({ name: 'Quality Loans' });
    const session = await createSession(web, org.testSecret, { idTypes: ['BVN'] });
    const context = await phoneContext(browser, web.baseUrl);
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(session.url);
    await consentAndId(page, TEST_IDENTITY_KEYS.bvn);
    await page.getByRole('heading', { name: 'Take a selfie video' }).waitFor();

    // One attempt, decided as the server decides frames the quality gate turned away.
    const row = await web.database.db.selectFrom('verification_sessions').select(['id']).where('public_id', '=', session.id).executeTakeFirstOrThrow();
    const now = new Date();
    await web.database.db
      .insertInto('session_liveness_attempts')
      .values({
        id: `att_quality_${Date.now()}`,
        session_id: Number(row.id),
        number: 1,
        challenges: JSON.stringify(['turn_left', 'blink']),
        status: 'failed',
        decision: JSON.stringify({ passed: false, reasons: ['POOR_QUALITY'], quality: ['too_dark', 'blurred'], scores: { antispoof: 0.9, live: 0.9, consistency: 0.97 }, challenges: [], frontalFrame: 0, frames: 25, cpuMs: 900 }),
        created_at: now,
        expires_at: new Date(now.getTime() + 180_000),
        submitted_at: now,
        decided_at: now,
      })
      .execute();
    await web.database.db.updateTable('verification_sessions').set({ liveness_attempts: 1 }).where('id', '=', row.id).execute();

    await page.reload();
    await page.getByRole('heading', { name: 'Let us try the selfie again' }).waitFor();
    const alert = page.getByRole('alert');
    await alert.getByText(qualityText('too_dark')).waitFor();
    await alert.getByText(qualityText('blurred')).waitFor();
    expect(await alert.getByText('The picture was too dark. Face a window or a light, and try again.').count()).toBe(1);
    await page.getByText('2 tries left.').waitFor();
    await page.getByRole('button', { name: 'Start camera' }).waitFor();
    await noOverflow(page);
    await screenshot(page, 'verify-retry-quality');
    expect(errors).toEqual([]);
    await context.close();
  });
});
