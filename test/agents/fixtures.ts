import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { bearer } from '../helpers/app.js';
import type { DB } from '../../src/platform/db/schema.js';

/** Request bodies and small helpers the field-verification tests share. */

export const ADDRESS_BODY = {
  street: '12 Admiralty Way',
  lga: 'Eti-Osa',
  state: 'Lagos',
  applicant: { firstname: 'Adaeze', lastname: 'Okonkwo', idType: 'NIN', idNumber: '12345678901' },
};

export const BUSINESS_BODY = {
  name: 'Mama Put Ventures',
  type: 'Informal',
  street: '4 Broad Street',
  lga: 'Lagos Island',
  state: 'Lagos',
  canContactPoc: true,
  applicant: { firstname: 'Chidi', lastname: 'Eze', phone: '08031234567', email: 'chidi@example.com' },
};

export const ADDRESS_KEYS = [
  'id', 'reference', 'applicant', 'createdAt', 'completedAt', 'lattitude', 'longitude', 'photos', 'neighbor',
  'status', 'city', 'street', 'landmark', 'lga', 'state', 'country', 'flaggedForReview', 'reviewReason',
].sort();

export const IN_PROGRESS = { status: 'In Progress', subStatus: 'In Progress', state: 'In Progress' };
export const VERIFIED = { status: 'Verified', subStatus: 'verified', state: 'complete' };
export const CANCELLED = { status: 'Cancelled', subStatus: 'cancelled', state: 'cancelled' };
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function client(app: FastifyInstance) {
  return {
    post: (url: string, secret: string | undefined, payload?: object) =>
      app.inject({ method: 'POST', url, headers: secret ? bearer(secret) : {}, ...(payload ? { payload } : {}) }),
    get: (url: string, secret: string | undefined) => app.inject({ method: 'GET', url, headers: secret ? bearer(secret) : {} }),
    del: (url: string, secret: string | undefined) => app.inject({ method: 'DELETE', url, headers: secret ? bearer(secret) : {} }),
  };
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
  return rows.map((row) => ({ type: row.event_type, mode: row.mode, payload: row.payload as { type: string; timestamp: string; data: Record<string, unknown> } }));
}

export function expectStyleA(res: { statusCode: number; json(): unknown }, status: number, code: string) {
  const body = res.json() as Record<string, unknown>;
  if (res.statusCode !== status || body.status !== 'error' || body.code !== code || typeof body.message !== 'string') {
    throw new Error(`expected ${status} ${code} style A, got ${res.statusCode} ${JSON.stringify(body)}`);
  }
  return body as { status: 'error'; code: string; message: string };
}

export interface FormFile {
  field?: string;
  filename: string;
  type: string;
  bytes: Buffer;
}

/** A multipart/form-data body (for app.inject) with text fields and files. */
export function multipartBody(fields: Record<string, string | number | boolean>, files: FormFile[] = []) {
  const boundary = `----vouch${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    chunks.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  for (const file of files) {
    chunks.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${file.field ?? 'photos'}"; filename="${file.filename}"\r\ncontent-type: ${file.type}\r\n\r\n`));
    chunks.push(file.bytes, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
