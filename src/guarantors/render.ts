import type { Static } from 'typebox';
import { formatTimestamp } from '../respondents/fields.js';
import type { GuarantorRecord } from './schemas.js';
import { GUARANTOR_STATES } from './states.js';
import type { GuarantorRow } from './tables.js';
import { formattedAddress } from './validate.js';

export type GuarantorRecordData = Static<typeof GuarantorRecord>;

/** The guarantor verification record as GET returns it and webhooks carry it. */
export function renderGuarantor(row: GuarantorRow): GuarantorRecordData {
  const { address } = row;
  return {
    id: Number(row.id),
    reference: row.reference,
    applicant: row.applicant,
    firstname: row.firstname,
    lastname: row.lastname,
    phone: row.phone,
    email: row.email,
    acceptableIdType: row.acceptable_id_types,
    address: {
      formattedAddress: formattedAddress(address),
      state: address.state,
      lga: address.lga,
      street: address.street,
      city: address.city,
      country: address.country,
    },
    verifyAddress: row.verify_address,
    addressVerificationId: row.address_verification_id === null ? null : Number(row.address_verification_id),
    status: GUARANTOR_STATES.display(row.state, row.reason),
    createdAt: formatTimestamp(row.created_at),
    completedAt: formatTimestamp(row.completed_at ?? row.cancelled_at),
  };
}
