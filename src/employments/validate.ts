import { workflowConsent, type Consent } from '../consent/consent.js';
import { formatDmy, parseDate, type CalendarDate } from '../identities/matching.js';
import type { RiskLevel } from '../platform/db/schema.js';
import { checkDob, checkEmail, checkPhone, checkReference, checkRiskFields, compareDates, inPast, isoDate, limited, Problems, text } from '../respondents/fields.js';
import type { CreateEmploymentBody } from './schemas.js';
import type { EmploymentApplicant } from './tables.js';

export interface EmploymentInput {
  reference: string;
  applicant: EmploymentApplicant;
  employerName: string;
  employerEmail: string;
  employerPhone: string;
  title: string;
  /** YYYY-MM-DD */
  startDate: string;
  /** YYYY-MM-DD, or null while still employed. */
  endDate: string | null;
  /** The person's consent (src/consent/consent.ts), when given. */
  consent?: Consent | undefined;
}

/** A calendar date in any of the accepted spellings, in the past; problems name the field. */
export function checkPastDate(problems: Problems, field: string, value: string | undefined, now: Date): CalendarDate | undefined {
  const raw = text(value);
  if (raw === undefined) return undefined;
  const date = parseDate(raw);
  if (!date || !inPast(date, now)) {
    problems.add(`${field} must be a past date written DD/MM/YYYY, DD-MM-YYYY or YYYY-MM-DD`);
    return undefined;
  }
  return date;
}

/** "2019-04-01" -> "01/04/2019": the record's day/month/year style. */
export function displayDate(iso: string | null | undefined): string {
  const date = iso ? parseDate(iso) : undefined;
  return date ? formatDmy(date, '/') : '';
}

/** Checks a create request; throws one 400 naming every problem. */
export function validateEmployment(body: CreateEmploymentBody, riskLevel: RiskLevel, now: Date, consentRequired = false): EmploymentInput {
  const problems = new Problems();
  const applicant = body.applicant;
  checkRiskFields(problems, riskLevel, applicant);
  const firstname = limited(problems, 'applicant.firstname', applicant.firstname, 100);
  const lastname = limited(problems, 'applicant.lastname', applicant.lastname, 100);
  if (firstname === undefined) problems.add('applicant.firstname must not be blank');
  if (lastname === undefined) problems.add('applicant.lastname must not be blank');
  const employerName = limited(problems, 'employerName', body.employerName, 200);
  if (employerName === undefined) problems.add('employerName must not be blank');
  const employerEmail = checkEmail(problems, 'employerEmail', body.employerEmail);
  if (employerEmail === undefined) problems.add('employerEmail must not be blank');
  const title = limited(problems, 'title', body.title, 200);
  if (title === undefined) problems.add('title must not be blank');
  const start = checkPastDate(problems, 'startDate', body.startDate, now);
  if (text(body.startDate) === undefined) problems.add('startDate must not be blank');
  const end = checkPastDate(problems, 'endDate', body.endDate, now);
  if (start && end && compareDates(end, start) < 0) problems.add('endDate must not be before startDate');
  const input: EmploymentInput = {
    reference: checkReference(problems, body.reference, 'emp'),
    applicant: {
      firstname: firstname ?? '',
      lastname: lastname ?? '',
      middlename: limited(problems, 'applicant.middlename', applicant.middlename, 100) ?? '',
      phone: checkPhone(problems, 'applicant.phone', applicant.phone) ?? '',
      gender: limited(problems, 'applicant.gender', applicant.gender, 20) ?? '',
      photo: '',
      birthdate: checkDob(problems, 'applicant.dob', applicant.dob, now) ?? '',
    },
    employerName: employerName ?? '',
    employerEmail: employerEmail ?? '',
    employerPhone: checkPhone(problems, 'employerPhone', body.employerPhone) ?? '',
    title: title ?? '',
    startDate: start ? isoDate(start) : '',
    endDate: end ? isoDate(end) : null,
    consent: workflowConsent(body.consent, consentRequired, problems),
  };
  problems.throwIfAny();
  return input;
}
