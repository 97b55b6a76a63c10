import { sql, type Kysely } from 'kysely';
import { keyringOf } from '../../platform/crypto/fields.js';
import type { DB } from '../../platform/db/schema.js';
import type { IdentityType, NinRecord, RecordOf } from '../records.js';
import { registryIndex } from './import.js';
import type { Registry } from './registry.js';

/**
 * The live-mode registry held in `registry_records`, loaded by `vouch registry import`. Rows are
 * found by blind index (an HMAC of the number or phone) and their records come back decrypted.
 */
export class EmbeddedRegistry implements Registry {
  constructor(private readonly db: Kysely<DB>) {}

  /** `key` as `registryKey`/`cacKey` produce it: the caller normalises the number. */
  async find<T extends IdentityType>(type: T, key: string): Promise<RecordOf[T] | undefined> {
    const row = await this.db
      .selectFrom('registry_records')
      .select('record')
      .where('type', '=', type)
      .where('key', '=', registryIndex(keyringOf(this.db), type, key))
      .executeTakeFirst();
    return row?.record as RecordOf[T] | undefined;
  }

  /** Several people can share a phone; the most recently imported record answers. */
  async findNinByPhone(e164Phone: string): Promise<NinRecord | undefined> {
    const row = await this.db
      .selectFrom('registry_records')
      .select('record')
      // A literal, not a parameter: a generic plan can use the partial index only if it sees 'nin'.
      .where('type', '=', sql.lit('nin'))
      .where('phone', '=', keyringOf(this.db).blindIndex('phone', e164Phone))
      .orderBy('updated_at', 'desc')
      .orderBy('key')
      .limit(1)
      .executeTakeFirst();
    return row?.record as NinRecord | undefined;
  }

  /**
   * Whether any record of `type` is held (for `nin_phone`, any NIN with a phone): a not-found
   * from a registry that holds none of a type says nothing about the person (the router).
   */
  async holds(type: IdentityType | 'nin_phone'): Promise<boolean> {
    const query = this.db.selectFrom('registry_records').select(sql.lit(1).as('one'));
    const row = await (type === 'nin_phone'
      ? query.where('type', '=', sql.lit('nin')).where('phone', 'is not', null)
      : query.where('type', '=', type)
    )
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }
}
