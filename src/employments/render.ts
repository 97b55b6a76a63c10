import type { Static } from 'typebox';
import { formatTimestamp } from '../respondents/fields.js';
import type { EmploymentRecord } from './schemas.js';
import { EMPLOYMENT_STATES } from './states.js';
import type { EmploymentRow } from './tables.js';
import { displayDate } from './validate.js';

export type EmploymentRecordData = Static<typeof EmploymentRecord>;

/**
 * The employment verification record as GET returns it and webhooks carry it. Until the
 * employer answers, title and dates show the claim, strings are empty and booleans false.
 */
export function renderEmployment(row: EmploymentRow): EmploymentRecordData {
  const a = row.attestation;
  const confirmed = a?.decision === 'confirmed';
  const endDate = confirmed && a.endDate !== undefined ? a.endDate : row.claimed_end_date;
  const { firstname, lastname, middlename, phone, gender, photo } = row.applicant;
  return {
    id: Number(row.id),
    reference: row.reference,
    employerName: row.employer_name,
    employerPhone: row.employer_phone,
    employerEmail: row.employer_email,
    startDate: displayDate(confirmed && a.startDate ? a.startDate : row.claimed_start_date),
    endDate: displayDate(endDate),
    title: confirmed && a.title ? a.title : row.claimed_title,
    employeeStartDate: displayDate(row.claimed_start_date),
    rehire: a?.rehire ?? false,
    employerRespondedAt: formatTimestamp(row.responded_at),
    applicant: { firstname, lastname, middlename, phone, gender, photo },
    status: EMPLOYMENT_STATES.display(row.state, row.reason),
    industry: a?.industry ?? '',
    comment: a?.comment ?? '',
    companyName: a?.companyName || row.employer_name,
    employmentType: a?.employmentType ?? '',
    supervisorName: a?.supervisorName ?? '',
    supervisorTitle: a?.supervisorTitle ?? '',
    jobBenefits: a?.jobBenefits ?? '',
    attestatorName: a?.attestatorName ?? '',
    attestatorTitle: a?.attestatorTitle ?? '',
    attestatorContact: a?.attestatorContact ?? '',
    companyAddress: a?.companyAddress ?? '',
    compensationRate: a?.compensationRate ?? '',
    salaryRange: a?.salaryRange ?? '',
    supervisorEmail: a?.supervisorEmail ?? '',
    supervisorPhone: a?.supervisorPhone ?? '',
    verifiedPoc: a !== null,
    currentlyEmployed: confirmed && a.endDate === null,
    employerConsented: a !== null && a.decision !== 'declined',
    employeeCurrentlyEmployed: row.claimed_end_date === null,
    claimed: {
      title: row.claimed_title,
      startDate: displayDate(row.claimed_start_date),
      endDate: displayDate(row.claimed_end_date),
    },
    createdAt: formatTimestamp(row.created_at),
    completedAt: formatTimestamp(row.completed_at ?? row.cancelled_at),
  };
}
