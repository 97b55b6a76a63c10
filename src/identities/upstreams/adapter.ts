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

/** The identities a provider may compare a selfie with: those the biometrics endpoint takes (`frsc` is `drivers_license`). */
export const FACE_MATCH_TYPES = ['bvn', 'nin', 'drivers_license'] as const;
export type FaceMatchType = (typeof FACE_MATCH_TYPES)[number];

/** A selfie to compare with the photo the provider's registry holds for the identity. */
export interface FaceMatchRequest {
  type: FaceMatchType;
  /** The key as for a lookup (`UpstreamRequest.key`). */
  key: string;
  /** The selfie as plain base64 JPEG (no `data:` prefix), metadata stripped. */
  photoJpegBase64: string;
  /** Aborted when the source's time limit passes, as for a lookup. */
  signal: AbortSignal;
}

/** A provider's verdict, on its own scale (docs/upstreams.md, "Face matches"). */
export interface ProviderFaceMatch {
  /** The provider's own verdict, as it gave it. */
  match: boolean;
  /** Its similarity or confidence, 0 to `maxScore`, as it gave it. */
  confidence: number;
  /** The score it calls a match from: given in its answer, or the figure its documentation states. */
  threshold: number;
  maxScore: number;
}

export interface UpstreamAdapter {
  /**
   * The record, or undefined when the provider answered that no such record exists (an answer,
   * not a failure: the router does not fail over). Throws UpstreamFailure for everything else.
   * The router validates the record against its schema; an adapter maps, it need not validate.
   */
  find<T extends UpstreamType>(request: UpstreamRequest<T>): Promise<UpstreamRecordOf[T] | undefined>;
  /**
   * For a provider that documents a selfie-against-registry-photo match (its kind lists
   * `faceMatchTypes`): the provider's verdict, or undefined when it answered that no such identity
   * exists. Throws UpstreamFailure for everything else, with the same kinds as `find`, so the
   * breaker, health and 503 treat a face match as they treat a lookup. Never logs or throws the
   * key, the photo or the provider's body.
   */
  compareFace?(request: FaceMatchRequest): Promise<ProviderFaceMatch | undefined>;
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
  /** The identities the provider can compare a selfie with (`compareFace`); absent when it documents no such match. */
  readonly faceMatchTypes?: readonly FaceMatchType[];
  /** Throws an Error whose message says what is wrong when the secret has the wrong shape; never echoes it. */
  checkSecret(secret: string): void;
  create(settings: UpstreamSettings): UpstreamAdapter;
}
