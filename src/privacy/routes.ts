import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { isUuid } from '../accounts/service.js';
import { operatorActor, requireOperator } from '../console/guard.js';
import { CONSOLE_TAG } from '../console/routes.js';
import { ApiError } from '../platform/errors.js';
import { requireSession } from '../portal/guard.js';
import type { AreaOptions } from '../portal/plugin.js';
import { OrgParams, portalErrors, sessionSecurity } from '../portal/schemas.js';
import { getRetention, MAX_RETENTION_DAYS, MIN_RETENTION_DAYS, RETENTION_LABELS, setRetention, type RetentionKey } from './retention.js';

const Days = (description: string) => Type.Integer({ description: `${description}, in days` });
// "default" rather than null: with the server's type coercion a null would read as 0 and a 0 as null.
const Period = (key: RetentionKey) =>
  Type.Optional(Type.Union([Type.Integer(), Type.Literal('default')], { description: `${RETENTION_LABELS[key]}: days from ${MIN_RETENTION_DAYS} to ${MAX_RETENTION_DAYS}, or "default"` }));
const periods = (description: string) => ({
  lookupDays: Days(`${description}: ${RETENTION_LABELS.lookupDays}`),
  verificationDays: Days(`${description}: ${RETENTION_LABELS.verificationDays}`),
  photoDays: Days(`${description}: ${RETENTION_LABELS.photoDays}`),
  webhookDays: Days(`${description}: ${RETENTION_LABELS.webhookDays}`),
});

const Retention = Type.Object({
  orgId: Type.String(),
  ...periods('In force'),
  defaults: Type.Object(periods('The default')),
  custom: Type.Object(
    { lookupDays: Type.Boolean(), verificationDays: Type.Boolean(), photoDays: Type.Boolean(), webhookDays: Type.Boolean() },
    { description: 'Which periods the organization changed; the others follow the default' },
  ),
});

const RetentionBody = Type.Object(
  { lookupDays: Period('lookupDays'), verificationDays: Period('verificationDays'), photoDays: Period('photoDays'), webhookDays: Period('webhookDays') },
  { additionalProperties: false, minProperties: 1 },
);

/** The operator console's retention settings of an organization (docs/data-protection.md). */
export async function consoleRetentionRoutes(parent: FastifyInstance, { db, config }: AreaOptions): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const operatorsOnly = [requireSession(db), requireOperator];
  const known = (orgId: string) => {
    if (!isUuid(orgId)) throw new ApiError('NOT_FOUND_ERROR', `no organization with id ${orgId.slice(0, 40)}`);
    return orgId;
  };

  app.get(
    '/console/organizations/:orgId/retention',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleGetRetention',
        summary: "How long the organization's personal data is kept, with the defaults",
        security: sessionSecurity,
        params: OrgParams,
        response: { 200: Retention, ...portalErrors(401, 403, 404) },
      },
    },
    async (request) => getRetention(db, known(request.params.orgId), config.webhookRetentionDays),
  );

  app.put(
    '/console/organizations/:orgId/retention',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleSetRetention',
        summary: "Change how long the organization's personal data is kept (days from 1 to 3650, or \"default\")",
        description: 'The webhook period may not exceed the server\'s VOUCH_WEBHOOK_RETENTION_DAYS. Audited with the periods before and after. The retention job applies it on its next run (hourly).',
        security: sessionSecurity,
        params: OrgParams,
        body: RetentionBody,
        response: { 200: Retention, ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const change = Object.fromEntries(Object.entries(request.body).map(([key, value]) => [key, value === 'default' ? null : value]));
      return setRetention(db, known(request.params.orgId), change, operatorActor(request), config.webhookRetentionDays);
    },
  );
}
