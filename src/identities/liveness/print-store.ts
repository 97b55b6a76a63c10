import type { ColumnType, Generated, Kysely } from 'kysely';
import type { DB, Mode } from '../../platform/db/schema.js';
import { type FramePrint, hammingDistance, printBands } from './frames.js';

/** The organization and mode whose attempts are compared with each other. */
export interface PrintScope {
  orgId: string;
  mode: Mode;
}

export interface PrintOwner {
  scope: PrintScope;
  sessionId: string;
  attemptId: string;
}

/** Where the prints of earlier attempts' frames are kept, to refuse frames replayed later. */
export interface FramePrintStore {
  /** How many of `prints` are within `maxBits` of a print kept for another attempt of the scope. */
  countReplayed(owner: PrintOwner, prints: FramePrint[], maxBits: number): Promise<number>;
  /** Keeps the attempt's prints until `retainUntil`. */
  remember(owner: PrintOwner, prints: FramePrint[], retainUntil: Date): Promise<void>;
}

interface KeptPrint {
  attemptId: string;
  bands: [number, number, number, number];
  fine: Buffer;
}

function countMatches(prints: FramePrint[], kept: KeptPrint[], attemptId: string, maxBits: number): number {
  const others = kept.filter((print) => print.attemptId !== attemptId);
  return prints.filter((print) => {
    const bands = printBands(print.coarse);
    return others.some((other) => other.bands.some((band, i) => band === bands[i]) && hammingDistance(other.fine, print.fine) <= maxBits);
  }).length;
}

/** Prints in memory, for `vouch liveness replay` and the benchmark (one process, one run). */
export class MemoryPrintStore implements FramePrintStore {
  private readonly kept = new Map<string, KeptPrint[]>();

  async countReplayed(owner: PrintOwner, prints: FramePrint[], maxBits: number): Promise<number> {
    return countMatches(prints, this.kept.get(scopeKey(owner.scope)) ?? [], owner.attemptId, maxBits);
  }

  async remember(owner: PrintOwner, prints: FramePrint[]): Promise<void> {
    const key = scopeKey(owner.scope);
    const list = this.kept.get(key) ?? [];
    for (const print of prints) list.push({ attemptId: owner.attemptId, bands: printBands(print.coarse), fine: print.fine });
    this.kept.set(key, list);
  }
}

const scopeKey = (scope: PrintScope) => `${scope.orgId}:${scope.mode}`;

export interface LivenessFramePrintsTable {
  id: Generated<string>;
  org_id: string;
  mode: Mode;
  session_id: string;
  attempt_id: string;
  band0: number;
  band1: number;
  band2: number;
  band3: number;
  fine: Buffer;
  created_at: ColumnType<Date, Date | string | undefined, never>;
  expires_at: ColumnType<Date, Date | string, Date | string>;
}

declare module '../../platform/db/schema.js' {
  interface DB {
    liveness_frame_prints: LivenessFramePrintsTable;
  }
}

/**
 * Prints in the database (migration 0034), per organization and mode. Candidates come through
 * the band indexes (a copy shares a 16-bit band with its original), the fine print decides.
 */
export class DatabasePrintStore implements FramePrintStore {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async countReplayed(owner: PrintOwner, prints: FramePrint[], maxBits: number): Promise<number> {
    if (prints.length === 0) return 0;
    const bands = prints.map((print) => printBands(print.coarse));
    const column = (i: number) => [...new Set(bands.map((band) => band[i]!))];
    const rows = await this.db
      .selectFrom('liveness_frame_prints')
      .select(['attempt_id', 'band0', 'band1', 'band2', 'band3', 'fine'])
      .where('org_id', '=', owner.scope.orgId)
      .where('mode', '=', owner.scope.mode)
      .where('attempt_id', '<>', owner.attemptId)
      .where('expires_at', '>', this.now())
      .where((eb) => eb.or([eb('band0', 'in', column(0)), eb('band1', 'in', column(1)), eb('band2', 'in', column(2)), eb('band3', 'in', column(3))]))
      .limit(5000)
      .execute();
    const kept = rows.map((row) => ({
      attemptId: row.attempt_id,
      bands: [row.band0, row.band1, row.band2, row.band3] as [number, number, number, number],
      fine: Buffer.from(row.fine),
    }));
    return countMatches(prints, kept, owner.attemptId, maxBits);
  }

  async remember(owner: PrintOwner, prints: FramePrint[], retainUntil: Date): Promise<void> {
    if (prints.length === 0) return;
    await this.db
      .insertInto('liveness_frame_prints')
      .values(
        prints.map((print) => {
          const [band0, band1, band2, band3] = printBands(print.coarse);
          return {
            org_id: owner.scope.orgId,
            mode: owner.scope.mode,
            session_id: owner.sessionId,
            attempt_id: owner.attemptId,
            band0,
            band1,
            band2,
            band3,
            fine: print.fine,
            expires_at: retainUntil,
          };
        }),
      )
      .execute();
  }
}

/** Erases a session's prints (subject erasure, a deleted session). Returns how many went. */
export async function forgetSessionPrints(db: Kysely<DB>, scope: PrintScope, sessionId: string): Promise<number> {
  const result = await db
    .deleteFrom('liveness_frame_prints')
    .where('org_id', '=', scope.orgId)
    .where('mode', '=', scope.mode)
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes prints past their retention (for the retention job). Returns how many went. */
export async function purgeExpiredPrints(db: Kysely<DB>, now: Date): Promise<number> {
  const result = await db.deleteFrom('liveness_frame_prints').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
