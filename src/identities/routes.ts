import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { companySubject, fullNameSubject, personSubject, type LookupScreener } from './screening.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { requireAuth } from '../platform/auth.js';
import type { DB, RiskLevel } from '../platform/db/schema.js';
import { ApiError, type ConstraintViolation } from '../platform/errors.js';
import { IDENTITY_BILLABLES, IdentityLookups, requireRiskFields, skipsCache } from './lookups.js';
import { normalizeGender, normalizePhone, parseDate } from './matching.js';
import { CAC_TYPES, cacKey, TIN_PATTERN, type CacType } from './records.js';
import {
  renderBvn,
  renderBvnMatch,
  renderCac,
  renderDriversLicense,
  renderNin,
  renderTin,
  renderVin,
  renderVnin,
  type SuppliedApplicant,
} from './render.js';
import * as S from './schemas.js';
import { ConsentHeaders, lookupConsent } from '../consent/consent.js';

const TAGS = ['Identity lookups'];
const BVN = /^\d{11}$/;
const NIN = /^\d{11}$/;
const VNIN = /^[A-Za-z0-9]{16}$/;
const LICENSE = /^[A-Za-z0-9]{6,20}$/;
const VIN = /^[A-Za-z0-9]{9,25}$/;
const TIN = new RegExp(TIN_PATTERN);

function invalid(message: string): ApiError {
  return new ApiError('VALIDATION_ERROR', message);
}

function notFoundC(message: string) {
  return () => new ApiError('NOT_FOUND_ERROR', message, { style: 'C' });
}

function notFoundB(message: string) {
  return () => new ApiError('NOT_FOUND_ERROR', message);
}

/**
 * The applicant a lookup is matched against: the fields the organization's risk level requires
 * must be there, and values that cannot be compared at all are rejected (values that merely
 * differ are matched, not rejected).
 */
function checkApplicant(riskLevel: RiskLevel, body: SuppliedApplicant): void {
  requireRiskFields(riskLevel, body);
  if (body.dob !== undefined && body.dob.trim() !== '' && !parseDate(body.dob)) {
    throw invalid('dob must be a valid date written DD-MM-YYYY, DD/MM/YYYY or YYYY-MM-DD');
  }
}

/** Removes spaces and hyphens people type inside numbers (`KJA-83927AA02`, `90F5 B123…`). */
function compact(value: string): string {
  return value.replace(/[\s-]+/g, '').toUpperCase();
}

export interface IdentityRoutesOptions {
  db: Kysely<DB>;
  lookups: IdentityLookups;
  /** Screens what a lookup found, for organizations that screen every lookup (src/identities/screening.ts). */
  screen?: LookupScreener | undefined;
}

export async function identityRoutes(parent: FastifyInstance, { db, lookups, screen }: IdentityRoutesOptions): Promise<void> {
  /** `data` with the screening of what it found, when the organization screens every lookup. */
  const screened = async <T extends object>(request: FastifyRequest, data: T, subject: ReturnType<typeof personSubject>): Promise<T> => {
    const screening = await screen?.(request.auth, subject);
    return screening ? { ...data, screening } : data;
  };
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.addHook('onRequest', requireAuth(db));
  // A lookup without a body is valid (risk level NONE needs no applicant details).
  app.addHook('preValidation', async (request) => {
    request.body ??= {};
  });
  const security = [{ bearer: [] }];

  app.post(
    '/v1/verifications/identities/bvn/:ref',
    {
      schema: {
        tags: TAGS,
        operationId: 'lookupBvn',
        summary: 'Fetch and match a BVN record (basic or premium payload)',
        security,
        headers: ConsentHeaders,
        params: S.RefParam,
        querystring: S.BvnQuery,
        body: S.Applicant,
        response: { 200: S.success(S.BvnData), ...S.identityErrors('C') },
      },
    },
    async (request) => {
      const { ref } = request.params;
      const body = request.body ?? {};
      if (!BVN.test(ref)) throw invalid('BVN must be 11 digits');
      checkApplicant(request.auth.riskLevel, body);
      const premium = request.query.type === 'premium';
      const record = await lookups.run(request.auth, {
        billable: premium ? IDENTITY_BILLABLES.bvn_premium : IDENTITY_BILLABLES.bvn_basic,
        identifier: ref,
        noCache: skipsCache(request.headers),
        consent: lookupConsent(request),
        readsFirst: true,
        find: (registry) => registry.find('bvn', ref),
        notFound: notFoundC('BVN not found. Please provide a valid BVN'),
      });
      return { status: 'success' as const, data: (await screened(request, renderBvn(record, body, premium), personSubject(record))) as never };
    },
  );

  app.post(
    '/v1/verifications/identities/bvn/:ref/match',
    {
      schema: {
        tags: TAGS,
        operationId: 'matchBvn',
        summary: 'Match applicant details against a BVN record (six booleans)',
        security,
        headers: ConsentHeaders,
        params: S.RefParam,
        body: S.BvnMatchBody,
        response: { 201: S.success(S.BvnMatchData), ...S.identityErrors('C') },
      },
    },
    async (request, reply) => {
      const { ref } = request.params;
      const body = request.body ?? {};
      if (!BVN.test(ref)) throw invalid('BVN must be 11 digits');
      checkApplicant(request.auth.riskLevel, body);
      const input = {
        ...body,
        phoneNumber: body.phoneNumber ?? body.phone,
        emailAddress: body.emailAddress ?? body.email,
      };
      if (input.gender !== undefined && input.gender.trim() !== '' && !normalizeGender(input.gender)) {
        throw invalid('gender must be M, F, Male or Female');
      }
      const record = await lookups.run(request.auth, {
        billable: IDENTITY_BILLABLES.bvn_match,
        identifier: ref,
        noCache: skipsCache(request.headers),
        consent: lookupConsent(request),
        readsFirst: true,
        find: (registry) => registry.find('bvn', ref),
        notFound: notFoundC('BVN not found. Please provide a valid BVN'),
      });
      return reply.status(201).send({ status: 'success', data: renderBvnMatch(record, input) });
    },
  );

  app.post(
    '/v1/verifications/identities/nin/:ref',
    {
      schema: {
        tags: TAGS,
        operationId: 'lookupNin',
        summary: 'Fetch and match a NIN record',
        security,
        headers: ConsentHeaders,
        params: S.RefParam,
        body: S.Applicant,
        response: { 201: S.success(S.NinData), ...S.identityErrors('C') },
      },
    },
    async (request, reply) => {
      const { ref } = request.params;
      const body = request.body ?? {};
      if (!NIN.test(ref)) throw invalid('NIN must be 11 digits');
      checkApplicant(request.auth.riskLevel, body);
      const record = await lookups.run(request.auth, {
        billable: IDENTITY_BILLABLES.nin,
        identifier: ref,
        noCache: skipsCache(request.headers),
        consent: lookupConsent(request),
        readsFirst: true,
        find: (registry) => registry.find('nin', ref),
        notFound: notFoundC('NIN not found. Please provide a valid NIN'),
      });
      return reply.status(201).send({ status: 'success', data: await screened(request, renderNin(record, body, request.auth.payloadType), personSubject(record)) });
    },
  );

  app.post(
    '/v1/verifications/identities/nin_phone/:ref',
    {
      schema: {
        tags: TAGS,
        operationId: 'lookupNinByPhone',
        summary: 'Fetch and match the NIN record registered with a phone number',
        security,
        headers: ConsentHeaders,
        params: S.RefParam,
        body: S.Applicant,
        response: { 200: S.success(S.NinData), ...S.identityErrors('C') },
      },
    },
    async (request) => {
      const phone = normalizePhone(request.params.ref);
      const body = request.body ?? {};
      if (!phone) throw invalid('ref must be a valid Nigerian phone number, e.g. 08031234567 or +2348031234567');
      checkApplicant(request.auth.riskLevel, body);
      const record = await lookups.run(request.auth, {
        billable: IDENTITY_BILLABLES.nin_phone,
        identifier: phone,
        noCache: skipsCache(request.headers),
        consent: lookupConsent(request),
        readsFirst: true,
        find: (registry) => registry.findNinByPhone(phone),
        notFound: notFoundC('No NIN is registered with this phone number. Please provide a valid NIN phone number'),
      });
      return { status: 'success' as const, data: await screened(request, renderNin(record, body, request.auth.payloadType), personSubject(record)) };
    },
  );

  app.post(
    '/v1/verifications/identities/virtual-nin/:vNin',
    {
      schema: {
        tags: TAGS,
        operationId: 'lookupVirtualNin',
        summary: 'Fetch and match a record by virtual NIN',
        security,
        headers: ConsentHeaders,
        params: S.VninParam,
        body: S.VninBody,
        response: { 201: S.success(S.VninData), ...S.identityErrors('C') },
      },
    },
    async (request, reply) => {
      const vNin = request.params.vNin.trim().toUpperCase();
      const body = request.body ?? {};
      if (!VNIN.test(vNin)) throw invalid('vNin must be 16 letters and digits, e.g. TV738291046518QK');
      checkApplicant(request.auth.riskLevel, body);
      const record = await lookups.run(request.auth, {
        billable: IDENTITY_BILLABLES.vnin,
        identifier: vNin,
        noCache: skipsCache(request.headers),
        consent: lookupConsent(request),
        readsFirst: true,
        find: (registry) => registry.find('vnin', vNin),
        notFound: notFoundC('vNIN not found. Please provide a valid vNIN'),
      });
      return reply.status(201).send({ status: 'success', data: await screened(request, renderVnin(record, body, request.auth.payloadType), personSubject(record)) });
    },
  );

  app.post(
    '/v1/verifications/identities/drivers_license/:ref',
    {
      schema: {
        tags: TAGS,
        operationId: 'lookupDriversLicense',
        summary: 'Fetch and match a drivers license record',
        security,
        headers: ConsentHeaders,
        params: S.RefParam,
        body: S.DriversLicenseBody,
        response: { 201: S.success(S.DriversLicenseData), ...S.identityErrors('C') },
      },
    },
    async (request, reply) => {
      const licenseNo = compact(request.params.ref);
      const body = request.body ?? {};
      if (!LICENSE.test(licenseNo)) throw invalid('ref must be a drivers license number of 6 to 20 letters and digits');
      checkApplicant(request.auth.riskLevel, body);
      const record = await lookups.run(request.auth, {
        billable: IDENTITY_BILLABLES.drivers_license,
        identifier: licenseNo,
        noCache: skipsCache(request.headers),
        consent: lookupConsent(request),
        readsFirst: true,
        find: (registry) => registry.find('drivers_license', licenseNo),
        notFound: notFoundC('Drivers license not found. Please provide a valid license number'),
      });
      return reply.status(201).send({ status: 'success', data: await screened(request, renderDriversLicense(record, body), personSubject(record)) });
    },
  );

  app.post(
    '/v1/verifications/identities/vin/:ref',
    {
      schema: {
        tags: TAGS,
        operationId: 'lookupVotersCard',
        summary: 'Fetch a voters card record',
        security,
        headers: ConsentHeaders,
        params: S.RefParam,
        body: S.Applicant,
        response: { 201: S.success(S.VinData), ...S.identityErrors('B') },
      },
    },
    async (request, reply) => {
      const vin = compact(request.params.ref);
      const body = request.body ?? {};
      if (!VIN.test(vin)) throw invalid('ref must be a voters card number (VIN) of 9 to 25 letters and digits');
      checkApplicant(request.auth.riskLevel, body);
      const record = await lookups.run(request.auth, {
        billable: IDENTITY_BILLABLES.vin,
        identifier: vin,
        noCache: skipsCache(request.headers),
        consent: lookupConsent(request),
        readsFirst: true,
        find: (registry) => registry.find('vin', vin),
        notFound: notFoundB('Voters details not found'),
      });
      return reply.status(201).send({ status: 'success', data: await screened(request, renderVin(record), fullNameSubject(record.fullname)) });
    },
  );

  app.post(
    '/v1/verifications/identities/cac',
    {
      schema: {
        tags: TAGS,
        operationId: 'lookupCompany',
        summary: 'Look up a company, business name or incorporated trustee in the corporate registry',
        security,
        headers: ConsentHeaders,
        body: S.CacBody,
        response: { 200: S.success(S.CacData), ...S.identityErrors('B') },
      },
    },
    async (request) => {
      const body = request.body ?? {};
      const violations = cacViolations(body);
      if (violations.length > 0) {
        throw new ApiError('VALIDATION_ERROR', 'Invalid corporate registry request', { violations });
      }
      const type = body.type as CacType;
      const key = cacKey(type, body.rcNumber!);
      const record = await lookups.run(request.auth, {
        billable: IDENTITY_BILLABLES.cac,
        identifier: key.split(':')[1]!,
        noCache: skipsCache(request.headers),
        consent: lookupConsent(request),
        readsFirst: true,
        find: (registry) => registry.find('cac', key),
        notFound: notFoundB('Company with the provided CAC details not found'),
      });
      return { status: 'success' as const, data: await screened(request, renderCac(record), companySubject(record.companyName)) };
    },
  );

  app.get(
    '/v1/verifications/identities/tin/:ref',
    {
      schema: {
        tags: TAGS,
        operationId: 'lookupTin',
        summary: 'Look up a corporate tax record by TIN',
        security,
        headers: ConsentHeaders,
        params: S.RefParam,
        response: { 200: S.success(S.TinData), ...S.identityErrors('B') },
      },
    },
    async (request) => {
      const tin = request.params.ref.trim().toUpperCase();
      if (!TIN.test(tin)) {
        throw invalid('TIN must be in the format XXXXXXXX-XXXX: eight characters, a hyphen, then four characters');
      }
      const record = await lookups.run(request.auth, {
        billable: IDENTITY_BILLABLES.tin,
        identifier: tin,
        noCache: skipsCache(request.headers),
        consent: lookupConsent(request),
        readsFirst: true,
        find: (registry) => registry.find('tin', tin),
        notFound: notFoundB('Company with the provided TIN not found'),
      });
      return { status: 'success' as const, data: await screened(request, renderTin(record), companySubject(record.taxpayerName)) };
    },
  );
}

function cacViolations(body: { type?: string | undefined; rcNumber?: string | number | undefined }): ConstraintViolation[] {
  const violations: ConstraintViolation[] = [];
  const target = { ...body };
  if (!CAC_TYPES.includes(body.type as CacType)) {
    violations.push({
      target,
      value: body.type ?? null,
      property: 'type',
      children: [],
      constraints: { matches: `Invalid company type: type must be one of ${CAC_TYPES.join(', ')}` },
    });
  }
  const rc = body.rcNumber;
  if (rc === undefined || !/^([A-Za-z]{2})?\d{1,10}$/.test(String(rc).replace(/\s+/g, ''))) {
    violations.push({
      target,
      value: rc ?? null,
      property: 'rcNumber',
      children: [],
      constraints: { matches: 'rcNumber must be a registration number such as 1284395 or RC1284395' },
    });
  }
  return violations;
}
