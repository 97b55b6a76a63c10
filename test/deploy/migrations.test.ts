import { describe, expect, it } from 'vitest';
import { listMigrations } from '../../src/platform/db/migrate.js';

/**
 * A rolling upgrade runs the previous release against the new schema (docs/upgrades.md), so a
 * migration must be additive, or say how it upgrades: a line `-- upgrade: rolling <why it is
 * safe>` or `-- upgrade: downtime <why>`. The migrations before that rule were reviewed once;
 * their verdicts are the table in docs/upgrades.md.
 */

/** Statements the previous release may trip over: its reads and inserts assume the old schema. */
const NOT_ADDITIVE: readonly [RegExp, string][] = [
  [/\bDROP\s+(TABLE|COLUMN|VIEW|FUNCTION)\b/i, 'drops what the previous release may use'],
  [/\bRENAME\b/i, 'renames what the previous release names'],
  [/\bALTER\s+COLUMN\s+\w+\s+(SET\s+DATA\s+)?TYPE\b/i, 'changes a column type'],
  [/\bSET\s+NOT\s+NULL\b/i, 'makes a column required'],
  [/\bALTER\s+COLUMN\s+\w+\s+DROP\s+DEFAULT\b/i, "drops a default the previous release's inserts rely on"],
  [/\bADD\s+COLUMN\s+(?:(?!DEFAULT)[^,;])*\bNOT\s+NULL\b(?![^,;]*\bDEFAULT\b)/i, 'adds a required column without a default'],
];

/** The verdicts of docs/upgrades.md for the migrations written before the marker line existed. */
const REVIEWED: Readonly<Record<string, 'rolling' | 'downtime'>> = {
  '0018_agent_coverage_and_review': 'downtime',
  '0020_data_keys': 'downtime',
  '0023_account_security': 'downtime',
  '0024_mail_expiry_and_bodiless_events': 'rolling',
};

const MARKER = /^--\s*upgrade:\s*(rolling|downtime)\s+\S/m;

/** What in `sql` is not additive (comments left out). */
function notAdditive(sql: string): string[] {
  const code = sql.replace(/--.*$/gm, '');
  return NOT_ADDITIVE.filter(([pattern]) => pattern.test(code)).map(([, why]) => why);
}

describe('migrations and rolling upgrades', () => {
  it('every migration that is not additive says how it upgrades (or was reviewed in docs/upgrades.md)', () => {
    const unflagged = listMigrations()
      .filter((migration) => notAdditive(migration.sql).length > 0 && !REVIEWED[migration.version] && !MARKER.test(migration.sql))
      .map((migration) => `${migration.version}: ${notAdditive(migration.sql).join('; ')}`);
    expect(unflagged, 'add `-- upgrade: rolling <why>` or `-- upgrade: downtime <why>` and a row in docs/upgrades.md').toEqual([]);
  });

  it('tells the statements apart', () => {
    expect(notAdditive('ALTER TABLE people DROP COLUMN locked_until;')).toHaveLength(1);
    expect(notAdditive('ALTER TABLE t ADD COLUMN a text NOT NULL;')).toHaveLength(1);
    expect(notAdditive("ALTER TABLE t ADD COLUMN a text NOT NULL DEFAULT 'x' CHECK (a <> '');")).toEqual([]);
    expect(notAdditive('ALTER TABLE t ADD COLUMN a text, ADD COLUMN b int;')).toEqual([]);
    expect(notAdditive('ALTER TABLE t ALTER COLUMN a SET NOT NULL;')).toHaveLength(1);
    expect(notAdditive('ALTER TABLE t ALTER COLUMN a TYPE text USING a::text;')).toHaveLength(1);
    expect(notAdditive('CREATE TABLE t (id bigserial PRIMARY KEY, name text NOT NULL);')).toEqual([]);
    expect(notAdditive('-- we used to DROP TABLE here\nCREATE INDEX i ON t (a);')).toEqual([]);
  });
});
