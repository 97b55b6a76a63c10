import type { Kysely } from 'kysely';
import { TEST_IDENTITY_KEYS } from '../identities/registry/test-identities.js';
import type { Registry } from '../identities/registry/registry.js';
import type { DB } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import type { Scope } from '../platform/pagination.js';
import { distanceToScore, MAX_SCORE } from '../identities/biometrics/score.js';
import { matchThresholdOf } from '../identities/biometrics/threshold-setting.js';
import { compareWithApplicant, findPerson, renderIdentity } from './identity.js';
import { ID_TYPE_RULES } from './input.js';
import { renderSession, type SessionRecord } from './render.js';
import { lockSession } from './repository.js';
import { sessionNotFound } from './service.js';
import { FACE_MATCH_REASONS, ID_LOOKUP_REASONS, isOpen, SESSION_LIVENESS_REASONS, type SessionReason } from './states.js';
import type { SessionChecks } from './tables.js';
import { applySessionTransition } from './transition.js';
import { organizationFacts } from './view.js';

type Owner = 'idLookup' | 'liveness' | 'faceMatch';

function ownerOf(reason: string): Owner | undefined {
  if ((ID_LOOKUP_REASONS as readonly string[]).includes(reason)) return 'idLookup';
  if ((SESSION_LIVENESS_REASONS as readonly string[]).includes(reason)) return 'liveness';
  if ((FACE_MATCH_REASONS as readonly string[]).includes(reason)) return 'faceMatch';
  return undefined;
}

/**
 * The sandbox's test helper (POST /v1/test-helpers/sessions/:id/complete): completes an open test
 * session as its end user would, with the same transition (webhook included; test mode is never
 * charged). The ID is the sandbox identity; liveness and face match are marked `simulated`.
 */
export async function completeSessionForTest(
  db: Kysely<DB>,
  sandbox: Registry,
  scope: Scope,
  publicId: string,
  body: { outcome: 'verified' | 'failed'; reason?: string | undefined },
  now = new Date(),
): Promise<SessionRecord> {
  if (scope.mode !== 'test') throw sessionNotFound();
  const org = await organizationFacts(db, scope.orgId);
  // The simulated face match records the threshold a real one would have been decided at.
  const matchingThreshold = distanceToScore(await matchThresholdOf(db, scope.orgId));
  return db.transaction().execute(async (trx) => {
    const row = await lockSession(trx, scope, publicId);
    if (!row) throw sessionNotFound();
    if (!isOpen(row.status)) throw new ApiError('CONFLICT', `This verification session has already ended (${row.status})`);
    let reason: SessionReason | undefined;
    if (body.outcome === 'failed') {
      const raw = body.reason ?? (row.check_face_match ? 'FACE_MISMATCH' : row.check_liveness ? 'SPOOF_SUSPECTED' : 'ID_NOT_FOUND');
      const owner = ownerOf(raw);
      if (!owner) throw new ApiError('VALIDATION_ERROR', `reason must be one of ${[...ID_LOOKUP_REASONS, ...SESSION_LIVENESS_REASONS, ...FACE_MATCH_REASONS].join(', ')}`);
      if ((owner === 'liveness' && !row.check_liveness) || (owner === 'faceMatch' && !row.check_face_match)) {
        throw new ApiError('VALIDATION_ERROR', `reason ${raw} belongs to the ${owner} check, which this session does not run`);
      }
      reason = raw as SessionReason;
    }
    const failing = reason ? ownerOf(reason) : undefined;
    const idType = row.applicant.idType ?? row.id_types[0]!;
    const idNumber = row.applicant.idNumber ?? TEST_IDENTITY_KEYS[ID_TYPE_RULES[idType].registry];
    const checks: SessionChecks = { ...row.checks };
    const patch: Record<string, string | null> = {};
    if (failing === 'idLookup') {
      checks.idLookup = { passed: false, idType, attempts: Math.max(1, row.id_attempts), fieldMatches: null, reasons: [reason!] };
    } else {
      const record = await findPerson(sandbox, idType, idNumber);
      const matches = record ? compareWithApplicant(record, row.applicant, org.riskLevel).fieldMatches : null;
      checks.idLookup = { passed: true, idType, attempts: Math.max(1, row.id_attempts), fieldMatches: matches, reasons: [] };
      Object.assign(patch, { id_type: idType, id_number: idNumber, identity: record ? JSON.stringify(renderIdentity(idType, record, row.applicant, org.payloadType)) : null });
      if (row.check_liveness) {
        const passed = failing !== 'liveness';
        checks.liveness = { passed, attempts: Math.max(1, row.liveness_attempts), scores: null, challenges: [], reasons: passed ? [] : [reason!], simulated: true };
        if (passed && row.check_face_match) {
          const matched = failing !== 'faceMatch';
          checks.faceMatch = { passed: matched, matchScore: null, matchingThreshold, maxScore: MAX_SCORE, reasons: matched ? [] : [reason!], simulated: true, engine: 'local' };
        }
      }
    }
    const updated = await applySessionTransition(trx, row, {
      to: reason ? 'failed' : 'verified',
      ...(reason ? { reasons: [reason] } : {}),
      patch: { ...patch, checks: JSON.stringify(checks), ...(row.user_consent ? {} : { started_at: now }) },
      now,
    });
    return renderSession(updated);
  });
}
