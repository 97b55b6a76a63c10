import type { IdentityType, NinRecord, RecordOf } from '../records.js';

/**
 * Where identity records come from. Routes see only this interface: the embedded registry
 * (tables filled by `vouch registry import`), the sandbox's test identities, and later an
 * upstream provider adapter are interchangeable.
 */
export interface Registry {
  /** The record of `type` under its normalised key (see `registryKey`), or undefined. */
  find<T extends IdentityType>(type: T, key: string): Promise<RecordOf[T] | undefined>;
  /** The NIN record registered with this E.164 phone number, or undefined. */
  findNinByPhone(phone: string): Promise<NinRecord | undefined>;
}
