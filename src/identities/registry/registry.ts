import type { UsageInput } from '../../platform/billing.js';
import type { IdentityType, NinRecord, RecordOf } from '../records.js';

/** The 503's message when no source could answer a lookup (live, and test mode's magic number). */
export const REGISTRY_UNAVAILABLE = 'The identity registry is unavailable: every provider failed or timed out. Please retry later';

/** What one lookup asks of a registry beyond the key. Registries that hold no cache or sources ignore it. */
export interface LookupOptions {
  /** Skip cached answers (the request said `Cache-Control: no-cache`). */
  noCache?: boolean | undefined;
  /** Told which source answered: `embedded`, `cache`, or an upstream's name. */
  onAnswer?: ((source: string) => void) | undefined;
}

/** The wallet check of a live lookup (`coversPrice`): whether the organization's balance covers the price. */
export type Cover = Pick<UsageInput, 'orgId' | 'billable'>;

/** What `findIfCovered` answers: the balance did not cover the price (and nothing was read), or the read's record. */
export type CoveredFind<R> = { covered: false } | { covered: true; record: R | undefined };

/**
 * Where identity records come from. Routes see only this interface: the embedded registry
 * (tables filled by `vouch registry import`), the sandbox's test identities, and the upstream
 * router (src/identities/upstreams/router.ts) are interchangeable.
 */
export interface Registry {
  /** The record of `type` under its normalised key (see `registryKey`), or undefined. */
  find<T extends IdentityType>(type: T, key: string, options?: LookupOptions): Promise<RecordOf[T] | undefined>;
  /** The NIN record registered with this E.164 phone number, or undefined. */
  findNinByPhone(phone: string, options?: LookupOptions): Promise<NinRecord | undefined>;
  /**
   * `find` with a live lookup's wallet check in the same statement, for a registry that answers
   * the type from its own tables (no upstream, no cache): one round trip instead of two, and the
   * record is read only when the balance covers the price. Undefined when this registry cannot
   * (an upstream would be asked): the caller then checks the wallet alone first, and calls `find`.
   */
  findIfCovered?<T extends IdentityType>(type: T, key: string, cover: Cover, options?: LookupOptions): Promise<CoveredFind<RecordOf[T]>> | undefined;
}
