import { normalizePhone, parseDate } from '../identities/matching.js';
import { compareDates, inPast, isoDate } from '../respondents/fields.js';
import type { FormFields, PageResult, RespondentHandler } from '../respondents/handler.js';
import { html, type SafeHtml } from '../respondents/html.js';
import type { RespondentLink } from '../respondents/links.js';
import { closedPage, formatDay, thanksPage, unknownLinkPage, usedLinkPage, withdrawnPage } from '../respondents/pages.js';
import { claimedPeriod, employeeName } from './messages.js';
import type { EmploymentService } from './service.js';
import type { EmploymentAttestation, EmploymentRow } from './tables.js';

const EMPLOYMENT_TYPES = ['Full-time', 'Part-time', 'Contract', 'Temporary', 'Internship', 'Volunteer'];
const EMAIL = /^[^\s@<>]+@[^\s@<>]+\.[A-Za-z]{2,}$/;

/** Optional free-text fields of the attestation, as the form names them, with their labels, by section. */
const JOB_FIELDS = {
  salaryRange: 'Salary range',
  compensationRate: 'Compensation rate',
  jobBenefits: 'Job benefits (separate with commas)',
  industry: 'Industry',
  companyName: 'Company name',
  companyAddress: 'Company address',
} as const;
const SUPERVISOR_FIELDS = {
  supervisorName: "Supervisor's name",
  supervisorTitle: "Supervisor's title",
  supervisorEmail: "Supervisor's email",
  supervisorPhone: "Supervisor's phone",
} as const;
const TEXT_FIELDS = { ...JOB_FIELDS, ...SUPERVISOR_FIELDS };

const INPUT_TYPES: Partial<Record<keyof typeof TEXT_FIELDS, string>> = { supervisorEmail: 'email', supervisorPhone: 'tel' };

function closedPageFor(row: EmploymentRow): PageResult | undefined {
  if (row.state === 'cancelled') return withdrawnPage();
  if (row.state !== 'in_progress') return closedPage();
  return undefined;
}

/** "2019-04-01" -> "01-04-2019": how the form shows a date it prefills. */
function formDate(iso: string | null): string {
  const date = iso ? parseDate(iso) : undefined;
  return date ? `${String(date.day).padStart(2, '0')}-${String(date.month).padStart(2, '0')}-${date.year}` : '';
}

function input(name: string, label: string, value: string, type = 'text', hint?: string): SafeHtml {
  return html`<label for="${name}">${label}${hint ? html` <span class="hint">${hint}</span>` : ''}</label>
<input type="${type}" id="${name}" name="${name}" value="${value}">`;
}

function radio(name: string, value: string, label: string, current: string | undefined): SafeHtml {
  return html`<label class="choice"><input type="radio" name="${name}" value="${value}"${current === value ? html` checked` : ''}> <span>${label}</span></label>`;
}

function formPage(row: EmploymentRow, organization: string, expiresAt: Date, values: FormFields, errors: string[], status = 200): PageResult {
  const employee = employeeName(row.applicant);
  const v = (name: string, fallback = '') => values[name] ?? fallback;
  const body = html`<div class="card">
<h1>Employment reference for ${employee}</h1>
<p>${organization} asks <strong>${row.employer_name}</strong> to confirm what ${employee} says about their work there:</p>
<dl><dt>Job title</dt><dd>${row.claimed_title}</dd><dt>Period</dt><dd>${claimedPeriod(row.claimed_start_date, row.claimed_end_date)}</dd></dl>
<p class="muted">This request expires on ${formatDay(expiresAt)}. You can answer it once.</p>
</div>
${errors.length > 0 ? html`<div class="card errors" role="alert"><h2>Please check your answer</h2><ul>${errors.map((error) => html`<li>${error}</li>`)}</ul></div>` : ''}
<form method="post" class="card" autocomplete="off">
<fieldset>
<legend>Did ${employee} work at ${row.employer_name}?</legend>
${radio('decision', 'confirm', 'Yes: I confirm (and correct below anything that is wrong)', values.decision)}
${radio('decision', 'not_employee', 'No: this person never worked here', values.decision)}
${radio('decision', 'decline', 'I cannot or will not give a reference', values.decision)}
</fieldset>
<h2>Employment details</h2>
<p class="hint">Prefilled with what ${employee} told us. Change anything that is wrong.</p>
${input('title', 'Job title', v('title', row.claimed_title))}
${input('startDate', 'Start date', v('startDate', formDate(row.claimed_start_date)), 'text', 'DD-MM-YYYY')}
${input('endDate', 'End date', v('endDate', formDate(row.claimed_end_date)), 'text', 'DD-MM-YYYY; leave empty if still employed')}
<label for="employmentType">Employment type</label>
<select id="employmentType" name="employmentType">
<option value="">Choose…</option>
${EMPLOYMENT_TYPES.map((type) => html`<option${v('employmentType') === type ? html` selected` : ''}>${type}</option>`)}
</select>
<fieldset>
<legend>Would you rehire ${employee}?</legend>
${radio('rehire', 'yes', 'Yes', values.rehire)}
${radio('rehire', 'no', 'No', values.rehire)}
</fieldset>
<h2>About the job <span class="hint">optional</span></h2>
${(Object.keys(JOB_FIELDS) as (keyof typeof JOB_FIELDS)[]).map((name) => input(name, JOB_FIELDS[name], v(name, name === 'companyName' ? row.employer_name : '')))}
<h2>Supervisor <span class="hint">optional</span></h2>
${(Object.keys(SUPERVISOR_FIELDS) as (keyof typeof SUPERVISOR_FIELDS)[]).map((name) => input(name, SUPERVISOR_FIELDS[name], v(name), INPUT_TYPES[name]))}
<h2>Your attestation</h2>
${input('attestatorName', 'Your name', v('attestatorName'))}
${input('attestatorTitle', 'Your job title', v('attestatorTitle'))}
${input('attestatorContact', 'Your email or phone', v('attestatorContact'))}
<label for="comment">Comment <span class="hint">optional</span></label>
<textarea id="comment" name="comment">${v('comment')}</textarea>
<label class="choice"><input type="checkbox" name="consent" value="yes"${values.consent === 'yes' ? html` checked` : ''}> <span>I am authorised by ${row.employer_name} to give this information, and it is accurate.</span></label>
<button type="submit">Send my answer</button>
</form>`;
  return { status, title: `Employment reference for ${employee}`, body };
}

function field(form: FormFields, name: string, max = 200): string | undefined {
  const value = form[name]?.trim();
  return value ? value.slice(0, max) : undefined;
}

/** Reads the form into an attestation; problems are shown on the form again, nothing is recorded. */
function parseAttestation(form: FormFields, now: Date): { attestation?: EmploymentAttestation; errors: string[] } {
  const decision = form.decision;
  const comment = field(form, 'comment', 2000);
  if (decision === 'decline') return { attestation: { decision: 'declined', ...(comment ? { comment } : {}), via: 'respondent' }, errors: [] };
  if (decision !== 'confirm' && decision !== 'not_employee') return { errors: ['Choose whether this person worked with you.'] };
  const errors: string[] = [];
  const attestatorName = field(form, 'attestatorName');
  const attestatorTitle = field(form, 'attestatorTitle');
  const attestatorContact = field(form, 'attestatorContact');
  if (!attestatorName) errors.push('Enter your name.');
  if (!attestatorContact) errors.push('Enter your email or phone number.');
  else if (!EMAIL.test(attestatorContact) && !normalizePhone(attestatorContact)) errors.push('Your contact must be an email address or a Nigerian phone number.');
  if (form.consent !== 'yes') errors.push('Tick the box to confirm you are authorised to give this information.');
  const attestator = { attestatorName, attestatorTitle, attestatorContact, comment };
  if (decision === 'not_employee') {
    return errors.length > 0 ? { errors } : { attestation: { decision: 'not_employee', ...defined(attestator), via: 'respondent' }, errors };
  }
  if (!attestatorTitle) errors.push('Enter your job title.');
  const title = field(form, 'title');
  if (!title) errors.push('Enter the job title.');
  const start = parseDate(form.startDate);
  const endRaw = field(form, 'endDate');
  const end = endRaw ? parseDate(endRaw) : undefined;
  if (!start || !inPast(start, now)) errors.push('Enter the start date as day-month-year, e.g. 01-04-2019.');
  if (endRaw && (!end || !inPast(end, now))) errors.push('Enter the end date as day-month-year, or leave it empty if still employed.');
  if (start && end && compareDates(end, start) < 0) errors.push('The end date must not be before the start date.');
  if (form.rehire !== 'yes' && form.rehire !== 'no') errors.push('Say whether you would rehire this person.');
  const employmentType = field(form, 'employmentType');
  if (employmentType && !EMPLOYMENT_TYPES.includes(employmentType)) errors.push('Choose an employment type from the list.');
  const supervisorEmail = field(form, 'supervisorEmail');
  if (supervisorEmail && !EMAIL.test(supervisorEmail)) errors.push("The supervisor's email is not a valid email address.");
  const supervisorPhone = field(form, 'supervisorPhone');
  if (supervisorPhone && !normalizePhone(supervisorPhone)) errors.push("The supervisor's phone is not a valid Nigerian phone number.");
  if (errors.length > 0 || !start || !title) return { errors };
  const details = Object.fromEntries((Object.keys(TEXT_FIELDS) as (keyof typeof TEXT_FIELDS)[]).map((name) => [name, field(form, name)]));
  return {
    attestation: {
      decision: 'confirmed',
      title,
      startDate: isoDate(start),
      endDate: end ? isoDate(end) : null,
      rehire: form.rehire === 'yes',
      ...defined({ ...details, employmentType, ...attestator }),
      via: 'respondent',
    },
    errors,
  };
}

function defined(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

/** The employer's page: confirm or correct the claim and attest, say the person never worked there, or decline. */
export function employerRespondent(service: EmploymentService, now: () => Date): RespondentHandler {
  return {
    kind: 'employer',
    async show(link: RespondentLink) {
      const found = await service.forLink(link);
      if (!found) return unknownLinkPage();
      return closedPageFor(found.row) ?? formPage(found.row, found.organization, link.expiresAt, {}, []);
    },
    async submit(link: RespondentLink, form: FormFields) {
      const found = await service.forLink(link);
      if (!found) return unknownLinkPage();
      const closed = closedPageFor(found.row);
      if (closed) return closed;
      const parsed = parseAttestation(form, now());
      if (!parsed.attestation) return formPage(found.row, found.organization, link.expiresAt, form, parsed.errors, 422);
      const result = await service.answer(link, parsed.attestation);
      switch (result.kind) {
        case 'used':
          return usedLinkPage();
        case 'gone':
          return unknownLinkPage();
        case 'closed':
          return closedPageFor(result.row) ?? closedPage();
        case 'recorded':
          return thanksPage('Thank you', `Your answer has been sent to ${found.organization}.`);
      }
    },
  };
}
