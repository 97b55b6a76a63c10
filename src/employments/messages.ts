import { html } from '../respondents/html.js';
import { formatDay } from '../respondents/pages.js';
import type { MessageContent } from '../respondents/service.js';
import type { EmploymentApplicant } from './tables.js';
import { displayDate } from './validate.js';

export function employeeName(applicant: EmploymentApplicant): string {
  return [applicant.firstname, applicant.middlename, applicant.lastname].filter(Boolean).join(' ');
}

export interface EmployerRequest {
  organization: string;
  employerName: string;
  applicant: EmploymentApplicant;
  title: string;
  startDate: string;
  endDate: string | null;
}

/** The period as the applicant claims it: "01/04/2019 to 30/06/2023" or "since 01/04/2019". */
export function claimedPeriod(startDate: string, endDate: string | null): string {
  return endDate ? `${displayDate(startDate)} to ${displayDate(endDate)}` : `since ${displayDate(startDate)}`;
}

/** The email asking the employer to confirm or correct the claim. */
export function employerRequestMessage(request: EmployerRequest, link: string, expiresAt: Date): MessageContent {
  const employee = employeeName(request.applicant);
  const period = claimedPeriod(request.startDate, request.endDate);
  const until = formatDay(expiresAt);
  const subject = `${request.organization}: employment reference for ${employee}`;
  const text = [
    `Hello ${request.employerName},`,
    '',
    `${employee} says they worked at ${request.employerName} as ${request.title}, ${period}. ${request.organization} uses Vouch to confirm this with you.`,
    '',
    `Please confirm or correct the details, or tell us if you cannot answer (the link works once, until ${until}):`,
    link,
  ].join('\n');
  const body = html`<p>Hello ${request.employerName},</p>
<p>${employee} says they worked at ${request.employerName} as ${request.title}, ${period}. ${request.organization} uses Vouch to confirm this with you.</p>
<p><a href="${link}">Confirm or correct the details</a>, or tell us if you cannot answer (the link works once, until ${until}).</p>`;
  return { subject, text, html: body.value };
}
