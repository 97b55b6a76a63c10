import type { Kysely } from 'kysely';
import type { AuthContext } from '../platform/auth.js';
import { chargeUsage, recordUsage, type Billable, type UsageInput } from '../platform/billing.js';
import type { DB, Mode, RiskLevel } from '../platform/db/schema.js';
import { ApiError } from '../platform/errors.js';
import { heldKey } from '../platform/idempotency.js';
import { metrics } from '../platform/metrics.js';
import { CoverChecks, WalletCharger } from '../platform/wallet-charger.js';
import { recordLookupConsent, type Consent } from '../consent/consent.js';
import type { Registry } from './registry/registry.js';
import { SANDBOX_RETRY_AFTER_SECONDS, SANDBOX_TIMING, sandboxOutcome } from './registry/sandbox-outcomes.js';
import { REGISTRY_UNAVAILABLE } from './registry/registry.js';

/** What each identity lookup costs by default, in kobo (override with `vouch price set`). */
export const IDENTITY_BILLABLES = {
  bvn_basic: { type: 'bvn_basic', defaultPrice: 2_500 },
  bvn_premium: { type: 'bvn_premium', defaultPrice: 5_000 },
  bvn_match: { type: 'bvn_match', defaultPrice: 2_500 },
  nin: { type: 'nin', defaultPrice: 5_000 },
  nin_phone: { type: 'nin_phone', defaultPrice: 5_000 },
  vnin: { type: 'vnin', defaultPrice: 5_000 },
  drivers_license: { type: 'drivers_license', defaultPrice: 5_000 },
  vin: { type: 'vin', defaultPrice: 5_000 },
  cac: { type: 'cac', defaultPrice: 10_000 },
  tin: { type: 'tin', defaultPrice: 5_000 },
  biometrics: { type: 'biometrics', defaultPrice: 10_000 },
} as const satisfies Record<string, Billable>;

/** Applicant fields each risk level verifies, and so requires (spec: Risk levels). */
const REQUIRED_BY_RISK: Record<RiskLevel, readonly ('lastname' | 'firstname' | 'dob')[]> = {
  NONE: [],
  LOW: ['lastname'],
  MEDIUM: ['lastname', 'firstname'],
  HIGH: ['firstname', 'lastname', 'dob'],
};

/** Throws 400 naming every applicant field the organization's risk level requires and the body lacks. */
export function requireRiskFields(riskLevel: RiskLevel, body: Partial<Record<'firstname' | 'lastname' | 'dob', unknown>>): void {
  const missing = REQUIRED_BY_RISK[riskLevel].filter((field) => {
    const value = body[field];
    return typeof value !== 'string' || value.trim() === '';
  });
  if (missing.length === 0) return;
  const list = missing.join(', ');
  throw new ApiError(
    'VALIDATION_ERROR',
    `${list} ${missing.length === 1 ? 'is' : 'are'} required for this account's risk level (${riskLevel})`,
  );
}

/** Keeps the first three and last two characters: enough to audit, not enough to reuse. */
export function maskIdentifier(value: string): string {
  if (value.length <= 6) return '*'.repeat(value.length);
  return `${value.slice(0, 3)}${'*'.repeat(value.length - 5)}${value.slice(-2)}`;
}

/** A lookup refused because too many of its kind are in progress (face matches: 429, 503); counted as `busy`. */
export class LookupBusy extends ApiError {}

function paymentRequired(): ApiError {
  return new ApiError('PAYMENT_REQUIRED', 'Insufficient balance: the account must be funded before this verification can run');
}

export interface LookupRequest<R> {
  billable: Billable;
  /**
   * `find` reads the registry before it does anything else: a live lookup's wallet check can then
   * go in the same statement as that read (Registry.findIfCovered). Without it, the wallet is
   * checked alone before `find` runs (a face match takes its place in the engine's queue first).
   */
  readsFirst?: boolean;
  /** The identifier looked up, unmasked: it is masked before it is stored. */
  identifier: string;
  find(registry: Registry): Promise<R | undefined>;
  notFound(): ApiError;
  /** The request said `Cache-Control: no-cache`: cached upstream answers are skipped. */
  noCache?: boolean | undefined;
  /** The consent the request carried (src/consent/consent.ts): kept beside the usage row, only when there is one. */
  consent?: Consent | undefined;
}

/** Whether a request's Cache-Control asks for a fresh answer (`no-cache`, or `no-store`). */
export function skipsCache(headers: Record<string, string | string[] | undefined>): boolean {
  const value = headers['cache-control'];
  return /(^|[\s,])no-(cache|store)\b/i.test(Array.isArray(value) ? value.join(',') : value ?? '');
}

/** Which source answered and how long the registry calls took, for the usage record. */
interface LookupTrace {
  source: string;
  latencyMs: number;
}

/** A live wallet that could not pay, found by the wallet check made with a registry read: 402. */
class NotCovered extends Error {}

/** A live lookup's wallet check not made yet: made with the lookup's first registry read. */
interface PendingCover {
  work: Pick<UsageInput, 'orgId' | 'mode' | 'billable'>;
  checks: CoverChecks;
}

/**
 * The registry as one lookup sees it: its options passed on, its calls timed, the answering
 * source noted. With a pending wallet check, the first registry call makes it: in the read's own
 * statement where the registry can (`findIfCovered`), alone just before the call otherwise. A
 * wallet that cannot pay ends the lookup there (NotCovered), before anything is read.
 */
function traced(registry: Registry, defaultSource: string, noCache: boolean, cover: PendingCover | undefined) {
  const trace: LookupTrace = { source: defaultSource, latencyMs: 0 };
  const options = { noCache, onAnswer: (source: string) => (trace.source = source) };
  let pending = cover;
  const timed = async <T>(call: Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await call;
    } finally {
      trace.latencyMs += performance.now() - started;
    }
  };
  /** The pending wallet check, taken by the call that makes it. */
  const take = (): PendingCover | undefined => {
    const check = pending;
    pending = undefined;
    return check;
  };
  /** A wallet check alone (before a call that cannot carry it, or after a `find` that made none). */
  const checkAlone = async (check: PendingCover | undefined): Promise<void> => {
    if (check && !(await check.checks.covers(check.work))) throw new NotCovered();
  };
  const view: Registry = {
    find: async (type, key) => {
      const check = take();
      const covered = check && registry.findIfCovered?.(type, key, check.work, options);
      if (covered) {
        const answer = await timed(covered);
        if (!answer.covered) throw new NotCovered();
        return answer.record;
      }
      await checkAlone(check);
      return timed(registry.find(type, key, options));
    },
    findNinByPhone: async (phone) => {
      await checkAlone(take());
      return timed(registry.findNinByPhone(phone, options));
    },
  };
  return { trace, registry: view, checkPending: () => checkAlone(take()) };
}

export class IdentityLookups {
  private readonly charger: WalletCharger;
  private readonly coverChecks: CoverChecks;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly registries: Record<Mode, Registry>,
  ) {
    this.charger = new WalletCharger(db);
    this.coverChecks = new CoverChecks(db);
  }

  registry(mode: Mode): Registry {
    return this.registries[mode];
  }

  /**
   * Finds the record in the caller's mode's registry, records the lookup, and charges a live
   * success. A live wallet short of the price answers 402 before anything is looked up, so an
   * account that cannot pay learns nothing about the number and costs no upstream call: the
   * wallet is checked alone first or, for a lookup that starts with its registry read
   * (`readsFirst`), in the read's own statement where the registry can (`findIfCovered`: the
   * embedded registry as a type's one source), which reads no record when the balance falls
   * short. The charge after the lookup checks again (a concurrent charge may have emptied the
   * wallet meanwhile: 402 then too). Not found is recorded, not charged. The usage row notes the
   * answering source and the registry latency.
   *
   * With an Idempotency-Key, the charge marks the key committed in its own transaction (not the
   * batched one): a retry after this process died before answering finds the lookup paid for, and
   * looks up again without charging (docs/idempotency.md).
   */
  async run<R>(auth: AuthContext, request: LookupRequest<R>): Promise<R> {
    const count = (outcome: string) => metrics.lookups.inc({ type: request.billable.type, mode: auth.mode, outcome });
    const work = { orgId: auth.orgId, mode: auth.mode, billable: request.billable, subject: maskIdentifier(request.identifier) };
    const refuse = async (): Promise<never> => {
      const usageId = await recordUsage(this.db, work, 'insufficient_funds');
      if (request.consent) await recordLookupConsent(this.db, auth.orgId, usageId, request.consent);
      count('insufficient_funds');
      throw paymentRequired();
    };
    // Test mode's magic numbers answer what live mode would (docs/test-mode.md, "Every outcome").
    const magic = auth.mode === 'test' ? sandboxOutcome(request.identifier) : undefined;
    if (magic?.outcome === 'unpaid') await refuse();
    if (magic?.outcome === 'unavailable') {
      count('unavailable');
      throw new ApiError('SERVICE_UNAVAILABLE', REGISTRY_UNAVAILABLE, { retryAfterSeconds: SANDBOX_RETRY_AFTER_SECONDS });
    }
    if (magic?.outcome === 'slow') await new Promise((resolve) => setTimeout(resolve, SANDBOX_TIMING.slowMs));
    const key = heldKey();
    const paidFor = key?.committed === true;
    const checked = paidFor || auth.mode === 'test';
    if (!checked && !request.readsFirst && !(await this.coverChecks.covers(work))) await refuse();
    const cover = !checked && request.readsFirst ? { work, checks: this.coverChecks } : undefined;
    const { registry, trace, checkPending } = traced(this.registries[auth.mode], auth.mode === 'test' ? 'sandbox' : 'embedded', !!request.noCache, cover);
    let record: R | undefined;
    try {
      // A 503 (no upstream could answer) or a refused face match (429, 503) leaves here: no usage row, no charge.
      record = await request.find(registry);
      await checkPending();
    } catch (err) {
      if (err instanceof NotCovered) return refuse();
      count(err instanceof LookupBusy ? 'busy' : err instanceof ApiError && err.code === 'SERVICE_UNAVAILABLE' ? 'unavailable' : 'error');
      throw err;
    }
    const usage = { ...work, source: trace.source, latencyMs: Math.round(trace.latencyMs) };
    if (record === undefined) {
      const usageId = await recordUsage(this.db, usage, 'not_found');
      if (request.consent) await recordLookupConsent(this.db, auth.orgId, usageId, request.consent);
      count('not_found');
      throw request.notFound();
    }
    if (paidFor) {
      count('success');
      return record;
    }
    const charged = key
      ? await this.db.transaction().execute(async (trx) => {
          const result = await chargeUsage(trx, usage);
          if (result.paid) await key.markCommitted(trx);
          return result;
        })
      : await this.charger.charge(usage);
    // Off the batched charge (0014): one more insert, and only for a lookup that carried consent.
    if (request.consent) await recordLookupConsent(this.db, auth.orgId, charged.usageId, request.consent);
    if (!charged.paid) {
      count('insufficient_funds');
      throw paymentRequired();
    }
    count('success');
    return record;
  }
}
