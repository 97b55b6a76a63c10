import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/platform/db/schema.js';
import { bearer } from '../helpers/app.js';
import '../../src/respondents/tables.js';

/** Bodies and helpers the guarantor, employment and respondent tests share. */

/** The guarantor is the sandbox's NIN test identity (Babatunde Adeyemi, born 02-11-1985). */
export const TEST_NIN = { nin: '70412358961', firstname: 'Babatunde', lastname: 'Adeyemi', dob: '02-11-1985' };

export const GUARANTOR_BODY = {
  firstname: 'Babatunde',
  lastname: 'Adeyemi',
  phone: '08051234567',
  email: 'babatunde@example.com',
  street: '27 Allen Avenue',
  lga: 'Ikeja',
  state: 'Lagos',
  landmark: 'Opposite the filling station',
  acceptableIdType: ['NIN', 'BVN', 'Drivers license'],
  applicant: { firstname: 'Adaeze', lastname: 'Okonkwo', dob: '14-03-1990', phone: '08031234567', idType: 'BVN', idNumber: '22345678901' },
};

export const EMPLOYMENT_BODY = {
  applicant: { firstname: 'Chidi', lastname: 'Okafor', phone: '08031112222' },
  employerName: 'Kolanut Technologies',
  employerEmail: 'hr@kolanut.example.com',
  employerPhone: '08035556666',
  title: 'Software Engineer',
  startDate: '01/04/2019',
  endDate: '30/06/2023',
};

export const GUARANTOR_KEYS = [
  'id', 'reference', 'applicant', 'firstname', 'lastname', 'phone', 'email', 'acceptableIdType', 'address',
  'verifyAddress', 'addressVerificationId', 'status', 'createdAt', 'completedAt',
].sort();

export const EMPLOYMENT_KEYS = [
  'id', 'reference', 'employerName', 'employerPhone', 'employerEmail', 'startDate', 'endDate', 'title', 'employeeStartDate',
  'rehire', 'employerRespondedAt', 'applicant', 'status', 'industry', 'comment', 'companyName', 'employmentType',
  'supervisorName', 'supervisorTitle', 'jobBenefits', 'attestatorName', 'attestatorTitle', 'attestatorContact',
  'companyAddress', 'compensationRate', 'salaryRange', 'supervisorEmail', 'supervisorPhone', 'verifiedPoc',
  'currentlyEmployed', 'employerConsented', 'employeeCurrentlyEmployed', 'claimed', 'createdAt', 'completedAt',
].sort();

export const IN_PROGRESS = { status: 'IN_PROGRESS', subStatus: 'IN_PROGRESS', state: 'IN_PROGRESS' };
export const VERIFIED = { status: 'VERIFIED', subStatus: 'VERIFIED', state: 'COMPLETE' };
export const CANCELLED = { status: 'CANCELLED', subStatus: 'CANCELLED', state: 'CANCELLED' };
export const notVerified = (reason: string) => ({ status: 'NOT_VERIFIED', subStatus: reason, state: 'COMPLETE' });
/** "Timestamp without offset", UTC. */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

export function client(app: FastifyInstance) {
  return {
    post: (url: string, secret: string | undefined, payload?: object) =>
      app.inject({ method: 'POST', url, headers: secret ? bearer(secret) : {}, ...(payload ? { payload } : {}) }),
    get: (url: string, secret: string | undefined) => app.inject({ method: 'GET', url, headers: secret ? bearer(secret) : {} }),
    del: (url: string, secret: string | undefined) => app.inject({ method: 'DELETE', url, headers: secret ? bearer(secret) : {} }),
  };
}

export function expectStyleA(res: { statusCode: number; json(): unknown }, status: number, code: string) {
  const body = res.json() as Record<string, unknown>;
  if (res.statusCode !== status || body.status !== 'error' || body.code !== code || typeof body.message !== 'string') {
    throw new Error(`expected ${status} ${code} style A, got ${res.statusCode} ${JSON.stringify(body)}`);
  }
  return body as { status: 'error'; code: string; message: string };
}

export async function balanceOf(db: Kysely<DB>, orgId: string): Promise<number> {
  const row = await db.selectFrom('organizations').select('balance').where('id', '=', orgId).executeTakeFirstOrThrow();
  return Number(row.balance);
}

export async function deliveriesOf(db: Kysely<DB>, orgId: string) {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select(['event_type', 'mode', 'payload'])
    .where('org_id', '=', orgId)
    .orderBy('id')
    .execute();
  return rows.map((row) => ({ type: row.event_type, mode: row.mode, payload: row.payload as { type: string; timestamp: string; data: Record<string, any> } }));
}

/** The outbox messages of one verification, oldest first. */
export async function messagesOf(db: Kysely<DB>, kind: string, verificationId: number) {
  return db.selectFrom('outbox_messages').selectAll().where('kind', '=', kind).where('verification_id', '=', verificationId).orderBy('id').execute();
}

/** The token of the link in a verification's (first) message. */
export async function linkOf(db: Kysely<DB>, kind: 'guarantor_request' | 'employer_request', verificationId: number): Promise<{ url: string; token: string }> {
  const [message] = await messagesOf(db, kind, verificationId);
  if (!message) throw new Error(`no ${kind} message for ${verificationId}`);
  const token = /\/respond\/([A-Za-z0-9_-]{43})$/.exec(message.link)?.[1];
  if (!token) throw new Error(`unexpected link ${message.link}`);
  return { url: message.link, token };
}
