import { normalizePhone } from '../matching.js';
import type { IdentityType, NinRecord, RecordOf } from '../records.js';
import type { Registry } from './registry.js';
import { loadTestIdentities, TEST_IDENTITY_KEYS } from './test-identities.js';

/** Test mode's registry: the one fixed identity of each type, and nothing else. */
export class SandboxRegistry implements Registry {
  async find<T extends IdentityType>(type: T, key: string): Promise<RecordOf[T] | undefined> {
    if (TEST_IDENTITY_KEYS[type] !== key) return undefined;
    return (await loadTestIdentities())[type];
  }

  async findNinByPhone(phone: string): Promise<NinRecord | undefined> {
    const { nin } = await loadTestIdentities();
    return nin.phone !== undefined && normalizePhone(nin.phone) === phone ? nin : undefined;
  }
}
