import type { IdentityType, NinRecord, RecordOf } from '../records.js';

/** What one lookup asks of a registry beyond the key. Registries that hold no cache or sources ignore it. */
export interface LookupOptions {
  /** Skip cached answers (the request said `Cache-Control: no-cache`). */
  noCache?: boolean | undefined;
  /** Told which source answered: `embedded`, `cache`, or an upstream's name. */
  onAnswer?: ((source: string) => void) | undefined;
}

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
}
