import { sql, type Kysely } from 'kysely';
import { Batches } from '../../platform/batches.js';
import { coversPriceSelect } from '../../platform/billing.js';
import { keyringOf, protectionOf } from '../../platform/crypto/fields.js';
import { runPrepared } from '../../platform/db/prepared.js';
import type { DB } from '../../platform/db/schema.js';
import type { IdentityType, NinRecord, RecordOf } from '../records.js';
import { registryIndex } from './import.js';
import type { Cover, CoveredFind, Registry } from './registry.js';

/**
 * Under a name the field protection does not decrypt (`sealed`): each lookup decrypts its own copy.
 * Its values are kept from the planner (`unseen` in src/platform/db/prepared.ts), so PostgreSQL
 * plans it once per connection: planned for one blind index, it looked cheaper than for any, and
 * with a large registry it was planned again at every lookup.
 */
const READ_SEALED = 'select key, record as sealed from registry_records where type = (select $1::text) and key = any((select $2::text[])::text[])';

/**
 * READ_SEALED with a live lookup's wallet check (`coversPriceSelect` in src/platform/billing.ts:
 * the balance against the price, `prices` overriding the default) in the same statement. Its one row
 * without a key says the balance did not cover the price, or that nothing was found. The check is
 * the registry scan's gate (a one-time filter in the plan): a wallet that cannot pay reads no
 * record, known number or not. An unknown organization covers nothing.
 */
const READ_SEALED_IF_COVERED = `with wallet as (${coversPriceSelect('$3', '$4', '$5')})
  select coalesce((select covered from wallet), false) as covered, r.key, r.sealed
  from (values (1)) one left join (
    select key, record as sealed from registry_records
    where (select covered from wallet) and type = (select $1::text) and key = any((select $2::text[])::text[])
  ) r on true`;

interface CoveredRead {
  type: string;
  cover: Cover;
  index: string;
}

/**
 * The live-mode registry held in `registry_records`, loaded by `vouch registry import`. Rows are
 * found by blind index (an HMAC of the number or phone) and their records come back decrypted.
 */
export class EmbeddedRegistry implements Registry {
  /**
   * Lookups of one type arriving together are read in one statement (src/platform/batches.ts):
   * each gets the record as stored (encrypted; a record stored before encryption, as it is), and
   * decrypts its own copy.
   */
  private readonly reads: Batches<string, unknown>;
  /** The same with the wallet check, per type, organization and price: one statement per batch. */
  private readonly coveredReads: Batches<CoveredRead, CoveredFind<unknown>>;

  constructor(private readonly db: Kysely<DB>) {
    this.reads = new Batches((type, indexes) => this.readSealed(type, indexes));
    this.coveredReads = new Batches((_, reads) => this.readSealedIfCovered(reads));
  }

  /** `key` as `registryKey`/`cacKey` produce it: the caller normalises the number. */
  async find<T extends IdentityType>(type: T, key: string): Promise<RecordOf[T] | undefined> {
    const sealed = await this.reads.add(type, registryIndex(keyringOf(this.db), type, key));
    return sealed === undefined ? undefined : (protectionOf(this.db).reveal(sealed) as RecordOf[T]);
  }

  /** `find`, with the wallet check in the same statement (Registry.findIfCovered). */
  async findIfCovered<T extends IdentityType>(type: T, key: string, cover: Cover): Promise<CoveredFind<RecordOf[T]>> {
    const { orgId, billable } = cover;
    const read = { type, cover, index: registryIndex(keyringOf(this.db), type, key) };
    const answer = await this.coveredReads.add(`${type}\u0000${orgId}\u0000${billable.type}\u0000${billable.defaultPrice}`, read);
    if (!answer.covered || answer.record === undefined) return answer as CoveredFind<RecordOf[T]>;
    return { covered: true, record: protectionOf(this.db).reveal(answer.record) as RecordOf[T] };
  }

  /** One batch's reads (the same type, organization and price): not covered, or each index's stored record. */
  private async readSealedIfCovered(reads: CoveredRead[]): Promise<CoveredFind<unknown>[]> {
    const { type, cover } = reads[0]!;
    const indexes = reads.map((read) => read.index);
    const rows = await runPrepared<{ covered: boolean; key: string | null; sealed: unknown }>(this.db, READ_SEALED_IF_COVERED, [
      type,
      [...new Set(indexes)],
      cover.billable.type,
      cover.billable.defaultPrice,
      cover.orgId,
    ]);
    if (rows[0]?.covered !== true) return reads.map(() => ({ covered: false }));
    const byIndex = new Map<string, unknown>(rows.filter((row) => row.key !== null).map((row) => [row.key!, row.sealed]));
    return indexes.map((index) => ({ covered: true, record: byIndex.get(index) }));
  }

  /** The stored (encrypted) records under these blind indexes, one per index, in order. */
  private async readSealed(type: string, indexes: string[]): Promise<unknown[]> {
    const rows = await runPrepared<{ key: string; sealed: unknown }>(this.db, READ_SEALED, [type, [...new Set(indexes)]]);
    const byIndex = new Map<string, unknown>(rows.map((row) => [row.key, row.sealed]));
    return indexes.map((index) => byIndex.get(index));
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
