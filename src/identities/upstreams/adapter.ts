import type { IdentityType, NinRecord, RecordOf } from '../records.js';

/**
 * The contract between the lookup router and one upstream provider (an aggregator that reaches
 * the BVN, NIN and other registries). An adapter turns one lookup into the provider's HTTP call
 * and the provider's answer into our record (src/identities/records.ts); the router around it
 * (src/identities/upstreams/router.ts) owns timeouts, the retry, the circuit breaker, failover,
 * the cache and the validation of the record against its schema.
 */

/** What a source may be asked: each registry type, and the NIN found by a phone number. */
export const UPSTREAM_TYPES = ['bvn', 'nin', 'nin_phone', 'vnin', 'drivers_license', 'vin', 'cac', 'tin'] as const;
export type UpstreamType = (typeof UPSTREAM_TYPES)[number];

/** The record each type answers with: `nin_phone` answers a NIN record. */
export type UpstreamRecordOf = RecordOf & { nin_phone: NinRecord };

/** The registry type whose schema validates a type's answer. */
export function recordTypeOf(type: UpstreamType): IdentityType {
  return type === 'nin_phone' ? 'nin' : type;
}

export interface UpstreamRequest<T extends UpstreamType = UpstreamType> {
  type: T;
  /**
   * The key as the embedded registry normalises it (`registryKey`): digits for BVN and NIN,
   * upper case for vNIN, licence, VIN and TIN, `TYPE:RC` for CAC (see `cacKey`, e.g.
   * `limited_company:1234567`), and E.164 (`+2348031234567`) for `nin_phone`.
   */
  key: string;
  /** Aborted when the source's time limit passes: pass it to every request. */
  signal: AbortSignal;
}

/** How a source failed. Only `connection` is retried (once); every kind counts against the breaker. */
export type UpstreamFailureKind =
  /** No HTTP answer: refused, reset, DNS, TLS. */
  | 'connection'
  /** The time limit passed (the request's signal aborted). */
  | 'timeout'
  /** An HTTP status that is neither success nor the provider's documented "not found". */
  | 'http'
  /** An answer we cannot read: not JSON, missing fields, a record that fails its schema. */
  | 'malformed'
  /** The provider refused our credentials or our account (401/403, out of credit). */
  | 'refused';

/**
 * A failure of the source, not an answer: the router fails over to the next source. The message
 * is logged, so it must never hold PII (no identifier, name, phone or photo): say what went wrong
 * with the provider's answer (`HTTP 502`, `body is not JSON`, `entity.first_name missing`).
 */
export class UpstreamFailure extends Error {
  constructor(
    readonly kind: UpstreamFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'UpstreamFailure';
  }
}

export interface UpstreamAdapter {
  /**
   * The record, or undefined when the provider answered that no such record exists (an answer,
   * not a failure: the router does not fail over). Throws UpstreamFailure for everything else.
   * The router validates the record against its schema; an adapter maps, it need not validate.
   */
  find<T extends UpstreamType>(request: UpstreamRequest<T>): Promise<UpstreamRecordOf[T] | undefined>;
}

/** What the operator configured for one source (`vouch upstream add`). */
export interface UpstreamSettings {
  /** The provider's base URL, e.g. https://api.dojah.io (no trailing slash needed). */
  url: string;
  /**
   * The credential as given to `--secret`. A provider that needs two values documents how they
   * are joined (e.g. `APP_ID:SECRET_KEY`); `parseSecret` of the kind checks it at `add` time.
   */
  secret: string;
}

/** One kind of provider: its name for `--kind`, what it can answer, and how to reach it. */
export interface UpstreamKind {
  readonly kind: string;
  /** The types the provider's API offers (a source may be limited further with `--types`). */
  readonly types: readonly UpstreamType[];
  /** Throws an Error whose message says what is wrong when the secret has the wrong shape; never echoes it. */
  checkSecret(secret: string): void;
  create(settings: UpstreamSettings): UpstreamAdapter;
}
