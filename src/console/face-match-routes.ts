import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { isUuid } from '../accounts/service.js';
import { MEASURED_THRESHOLDS } from '../identities/biometrics/measured-thresholds.js';
import { MATCH_SCORE_BOUNDS } from '../identities/biometrics/score.js';
import { getThresholdSetting, setThreshold, type ThresholdSetting } from '../identities/biometrics/threshold-setting.js';
import { ApiError } from '../platform/errors.js';
import { requireSession } from '../portal/guard.js';
import type { AreaOptions } from '../portal/plugin.js';
import { Nullable, OrgParams, portalErrors, sessionSecurity } from '../portal/schemas.js';
import { operatorActor, requireOperator } from './guard.js';
import { CONSOLE_TAG } from './routes.js';

const BOUNDS = `${MATCH_SCORE_BOUNDS.min} to ${MATCH_SCORE_BOUNDS.max}`;

const Pairs = (description: string) =>
  Type.Object(
    {
      genuinePairs: Type.Integer({ description: 'Pairs of two photos of one person' }),
      impostorPairs: Type.Integer({ description: 'Pairs of photos of two different people' }),
      falseMatches: Type.Integer({ description: 'Impostor pairs that would match at this threshold' }),
      falseNonMatches: Type.Integer({ description: 'Genuine pairs that would not match at this threshold' }),
    },
    { description },
  );

const FaceMatchThreshold = Type.Object({
  orgId: Type.String(),
  matchingThreshold: Type.Integer({ description: "The threshold in force: the lowest score out of 100 the organization's face matches call a match" }),
  custom: Type.Boolean({ description: 'Set for this organization; false: the default' }),
  defaultThreshold: Type.Integer(),
  bounds: Type.Object({ min: Type.Integer(), max: Type.Integer() }, { description: 'The thresholds an operator may set' }),
  updatedAt: Nullable(Type.String({ format: 'date-time', description: 'When an operator last set or reset it' })),
  measured: Type.Object(
    {
      model: Type.String({ description: 'The face model measured' }),
      measuredOn: Type.String({ description: 'YYYY-MM-DD' }),
      photos: Type.Integer(),
      people: Type.Integer(),
      rows: Type.Array(
        Type.Object({
          score: Type.Integer(),
          blackBlack: Pairs('Both people Black'),
          otherOther: Pairs('Neither person Black'),
          cross: Pairs('One Black person and one other: impostor pairs only'),
        }),
        { description: 'One row per threshold an operator may set, strictest first' },
      ),
    },
    { description: "The face match's errors at each threshold, per group, on labelled photos of real people (bench/face-accuracy.ts; docs/biometrics.md)" },
  ),
});

const ThresholdBody = Type.Object(
  {
    // "default" rather than null: with the server's type coercion a null would read as 0.
    matchingThreshold: Type.Union([Type.Number(), Type.Literal('default')], { description: `A whole score from ${BOUNDS}, or "default"` }),
  },
  { additionalProperties: false },
);

const view = (setting: ThresholdSetting) => ({ ...setting, measured: MEASURED_THRESHOLDS });

/**
 * The operator console's face-match threshold of an organization (issue 50; docs/operators.md,
 * "Face match threshold"), with the measured error rates beside it. Operators only.
 */
export async function consoleFaceMatchRoutes(parent: FastifyInstance, { db }: Pick<AreaOptions, 'db'>): Promise<void> {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const operatorsOnly = [requireSession(db), requireOperator];
  const known = (orgId: string) => {
    if (!isUuid(orgId)) throw new ApiError('NOT_FOUND_ERROR', `no organization with id ${orgId.slice(0, 40)}`);
    return orgId;
  };

  app.get(
    '/console/organizations/:orgId/face-match',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleGetFaceMatchThreshold',
        summary: "The organization's face-match threshold (set or the default), the bounds, and the measured error rates at each threshold",
        security: sessionSecurity,
        params: OrgParams,
        response: { 200: FaceMatchThreshold, ...portalErrors(401, 403, 404) },
      },
    },
    async (request) => view(await getThresholdSetting(db, known(request.params.orgId))),
  );

  app.put(
    '/console/organizations/:orgId/face-match',
    {
      preValidation: operatorsOnly,
      schema: {
        tags: [CONSOLE_TAG],
        operationId: 'consoleSetFaceMatchThreshold',
        summary: `Set the organization's face-match threshold (a whole score from ${BOUNDS}), or "default"`,
        description:
          "The organization's next face match, through the biometrics endpoint or a verification session, is decided at it, and its record's `matchingThreshold` says so. " +
          'A higher threshold falsely matches fewer different people and turns away more genuine ones. Audited with the threshold before and after.',
        security: sessionSecurity,
        params: OrgParams,
        body: ThresholdBody,
        response: { 200: FaceMatchThreshold, ...portalErrors(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const { matchingThreshold } = request.body;
      const value = matchingThreshold === 'default' ? null : matchingThreshold;
      return view(await setThreshold(db, known(request.params.orgId), value, operatorActor(request)));
    },
  );
}
