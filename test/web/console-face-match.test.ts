import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEASURED_THRESHOLDS } from '../../src/identities/biometrics/measured-thresholds.js';
import { buildWebContext, screenshot, watchErrors, type WebContext } from '../helpers/browser.js';
import { operatorUser, type PortalUser } from '../helpers/portal.js';
import { noOverflow } from './verify-helpers.js';

/**
 * An organization's face-match threshold on its console page, in Chromium at phone width: the
 * operator reads the default and the measured table beside it, is told at the field why 51 is
 * refused, sets 47 (saved, audited), and resets it to the default. With VOUCH_SCREENSHOTS=1:
 * docs/images/console-face-match.png.
 */
let web: WebContext;
let operator: PortalUser;

beforeAll(async () => {
  web = await buildWebContext();
  operator = await operatorUser(web.app, web.database.db, { origin: web.baseUrl });
}, 90_000);
afterAll(() => web?.close());

const eventually = <T>(check: () => Promise<T>, timeout = 15_000) => expect.poll(check, { timeout });
/** Console errors other than the browser's note of an expected 4xx answer. */
const unexpected = (errors: string[]) => errors.filter((e) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(e));

describe("an organization's face match threshold in the console (phone width)", () => {
  it('shows the default and the measured table, refuses 51 at the field, sets 47 and resets it', { timeout: 120_000 }, async () => {
    const org = await web.org({ name: 'Ikeja Credit' });
    const other = await web.org({ name: 'Surulere Savings' });
    const [name, value] = operator.cookie.split('=') as [string, string];
    const { context, page } = await web.newPage({ phone: true });
    await context.addCookies([{ name, value, url: web.baseUrl }]);
    const errors = watchErrors(page);

    await page.goto(`/console/organizations/${org.id}`);
    const section = page.getByRole('region', { name: 'Face match threshold' });
    await eventually(() => section.getByTestId('face-match-in-force').textContent()).toBe('In force: 43 default');
    const field = section.getByLabel('Face match threshold');
    expect(await field.inputValue()).toBe('43');
    expect(await section.getByRole('button', { name: 'Reset to default (43)' }).isDisabled()).toBe(true);

    // The measured table: every threshold, the default's row marked, counts and rates per group.
    const table = section.getByRole('table', { name: 'Measured error rates at each threshold' });
    const rows = table.getByRole('row');
    expect(await rows.count()).toBe(MEASURED_THRESHOLDS.rows.length + 1);
    const at43 = MEASURED_THRESHOLDS.rows.find((row) => row.score === 43)!;
    const defaultRow = rows.filter({ hasText: /^43\s*default/ });
    expect(await defaultRow.count()).toBe(1);
    const cells = await defaultRow.getByRole('cell').allTextContents();
    expect(cells[1]).toMatch(new RegExp(`^${at43.blackBlack.falseMatches} \\(0\\.0\\d\\d %\\)$`));
    expect(cells[2]).toMatch(new RegExp(`^${at43.blackBlack.falseNonMatches} \\(\\d+\\.\\d %\\)$`));
    expect(cells[3]).toMatch(new RegExp(`^${at43.otherOther.falseMatches} \\(`));
    expect(cells[4]).toMatch(new RegExp(`^${at43.otherOther.falseNonMatches} \\(`));
    const impostors = at43.blackBlack.impostorPairs.toLocaleString('en-GB');
    await table.getByRole('columnheader', { name: `Black–Black false matches (of ${impostors} pairs of different people)` }).waitFor();
    await section.getByText(`Model ${MEASURED_THRESHOLDS.model}, measured on ${MEASURED_THRESHOLDS.measuredOn}`).waitFor();
    await section.scrollIntoViewIfNeeded();
    await noOverflow(page);

    // Out of bounds: the server's refusal, at the field; nothing saved.
    await field.fill('51');
    await section.getByRole('button', { name: 'Save threshold' }).click();
    await eventually(() => section.getByText('The threshold must be a whole number from 35 to 50, or "default" (43)').isVisible()).toBe(true);
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(await section.getByTestId('face-match-in-force').textContent()).toBe('In force: 43 default');

    await field.fill('47');
    await section.getByRole('button', { name: 'Save threshold' }).click();
    await eventually(() => section.getByTestId('face-match-in-force').textContent()).toMatch(/^In force: 47 set for this organization/);
    expect(await rows.filter({ hasText: /^47\s*in force/ }).count()).toBe(1);
    await screenshot(page, 'console-face-match');
    const saved = await web.database.db.selectFrom('face_match_settings').select(['org_id', 'matching_threshold']).execute();
    expect(saved).toEqual([{ org_id: org.id, matching_threshold: 47 }]);
    const audit = await web.database.db.selectFrom('audit_events').select(['org_id', 'after']).where('action', '=', 'organization.face_match_threshold_changed').execute();
    expect(audit).toEqual([{ org_id: org.id, after: { matchingThreshold: 47, default: false } }]);

    // Another organization's page still shows the default.
    await page.goto(`/console/organizations/${other.id}`);
    const otherSection = page.getByRole('region', { name: 'Face match threshold' });
    await eventually(() => otherSection.getByTestId('face-match-in-force').textContent()).toBe('In force: 43 default');

    await page.goto(`/console/organizations/${org.id}`);
    await eventually(() => section.getByTestId('face-match-in-force').textContent()).toMatch(/^In force: 47/);
    await section.getByRole('button', { name: 'Reset to default (43)' }).click();
    await eventually(() => section.getByTestId('face-match-in-force').textContent()).toMatch(/^In force: 43 default last changed /);
    expect(await field.inputValue()).toBe('43');
    expect(unexpected(errors)).toEqual([]);
  });
});
