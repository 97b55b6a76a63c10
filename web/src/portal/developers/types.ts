import type { operations } from '../../api/schema';

type Json<Op extends keyof operations, Status extends number = 200> = operations[Op]['responses'] extends Record<Status, { content: { 'application/json': infer T } }> ? T : never;

export type Access = Json<'portalGetAccess'>;
export type AccessRequest = Access['requests'][number];
export type RiskLevel = Access['riskLevel'];
export type PayloadType = Access['payloadType'];
export type Key = Json<'portalListKeys'>['data'][number];
export type RolledKey = Json<'portalRollKey'>;
export type Endpoint = Json<'portalGetWebhook'>;
export type Signing = NonNullable<Endpoint['signing']>;
export type DeliveryPage = Json<'portalListWebhookDeliveries'>;
export type Delivery = DeliveryPage['data'][number];
export type DeliveryDetail = Json<'portalGetWebhookDelivery'>;
export type DeliveryStatus = Delivery['status'];
export type SandboxMessage = Json<'portalListSandboxMessages'>['data'][number];

/** The spec's risk levels: which applicant details each check must send and Vouch compares with the record. */
export const RISK_LEVELS: { value: RiskLevel; fields: string; meaning: string }[] = [
  { value: 'NONE', fields: 'none', meaning: 'No applicant details are compared. Address and guarantor verifications are not available.' },
  { value: 'LOW', fields: 'last name', meaning: 'Every check must send the applicant’s last name, and Vouch compares it.' },
  { value: 'MEDIUM', fields: 'last name, first name', meaning: 'Every check must send the first and last names.' },
  { value: 'HIGH', fields: 'first name, last name, date of birth', meaning: 'Every check must send the names and the date of birth.' },
];

/** The spec's identity payload types (NIN lookups). */
export const PAYLOAD_TYPES: { value: PayloadType; meaning: string }[] = [
  { value: 'FULL', meaning: 'Your NIN lookups receive the full NIN data set.' },
  { value: 'HALF', meaning: 'Your NIN lookups receive fewer data: the record without the phone number and the photo.' },
];

/** How an endpoint's deliveries are signed (docs/webhooks.md, "Signing"). */
export const SIGNINGS: { value: Signing; label: string; short: string; meaning: string }[] = [
  { value: 'standard', label: 'Standard Webhooks', short: 'with Standard Webhooks', meaning: 'webhook-signature, checked by any Standard Webhooks library.' },
  { value: 'verifyme', label: 'VerifyMe style', short: 'the VerifyMe way', meaning: 'x-verifyme-signature: the hex HMAC-SHA512 of the raw body, keyed with the whole whsec_ secret, for receivers written for VerifyMe or QoreID.' },
  { value: 'both', label: 'Both', short: 'both ways', meaning: 'Both headers on every event, while your receiver moves from one to the other.' },
];
