import { html } from '../respondents/html.js';
import { formatDay } from '../respondents/pages.js';
import type { MessageContent } from '../respondents/service.js';
import { GUARANTOR_ID_TYPES } from './id-check.js';
import type { GuarantorApplicant, GuarantorIdType } from './tables.js';

export function applicantName(applicant: GuarantorApplicant): string {
  return [applicant.firstname, applicant.lastname].filter(Boolean).join(' ') || 'an applicant';
}

export interface GuarantorRequest {
  organization: string;
  guarantorFirstname: string;
  applicant: GuarantorApplicant;
  idTypes: readonly GuarantorIdType[];
}

/** The email asking the guarantor to answer; plain text and HTML say the same. */
export function guarantorRequestMessage(request: GuarantorRequest, link: string, expiresAt: Date): MessageContent {
  const applicant = applicantName(request.applicant);
  const ids = request.idTypes.map((type) => GUARANTOR_ID_TYPES[type].label).join(', ');
  const until = formatDay(expiresAt);
  const subject = `${request.organization}: will you stand as guarantor for ${applicant}?`;
  const text = [
    `Hello ${request.guarantorFirstname},`,
    '',
    `${applicant} has named you as their guarantor with ${request.organization}, which uses Vouch to confirm guarantors.`,
    '',
    `Please tell us whether you agree. If you do, you will be asked to confirm who you are with one of these IDs: ${ids}.`,
    '',
    `Answer here (the link works once, until ${until}):`,
    link,
    '',
    `If you do not know ${applicant}, open the link and decline.`,
  ].join('\n');
  const body = html`<p>Hello ${request.guarantorFirstname},</p>
<p>${applicant} has named you as their guarantor with ${request.organization}, which uses Vouch to confirm guarantors.</p>
<p>Please tell us whether you agree. If you do, you will be asked to confirm who you are with one of these IDs: ${ids}.</p>
<p><a href="${link}">Answer the request</a> (the link works once, until ${until}).</p>
<p>If you do not know ${applicant}, open the link and decline.</p>`;
  return { subject, text, html: body.value };
}
