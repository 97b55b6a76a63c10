import { normalizePhone } from '../matching.js';
import type { IdentityType, NinRecord, RecordOf } from '../records.js';
import type { Registry } from './registry.js';
import { sandboxOutcome } from './sandbox-outcomes.js';
import { loadTestIdentities, TEST_IDENTITY_KEYS } from './test-identities.js';

/** Test mode's registry: the one fixed identity of each type, and nothing else. */
export class SandboxRegistry implements Registry {
  async find<T extends IdentityType>(type: T, key: string): Promise<RecordOf[T] | undefined> {
    if (TEST_IDENTITY_KEYS[type] === key) return (await loadTestIdentities())[type];
    // The slow magic number (sandbox-outcomes.ts) answers, late, as the type's test identity under its own number.
    const magic = sandboxOutcome(key);
    if (magic?.outcome === 'slow' && magic.type === type) {
      const record = (await loadTestIdentities())[type];
      return { ...record, [type]: key };
    }
    return undefined;
  }

  async findNinByPhone(phone: string): Promise<NinRecord | undefined> {
    const { nin } = await loadTestIdentities();
    return nin.phone !== undefined && normalizePhone(nin.phone) === phone ? nin : undefined;
  }
}
