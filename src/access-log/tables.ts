import type { ColumnType, Generated } from 'kysely';

export type AccessActorKind = 'api' | 'member' | 'operator' | 'agent' | 'cli';
export type AccessChannel = 'api' | 'portal' | 'console' | 'field' | 'cli';
export type AccessAction = 'view' | 'list' | 'export';

/**
 * One view, list or export of personal data (0021; issue 12, point 5): who, what, how, when, from
 * where; no personal data itself. One row per access: `resource_ids` are the records it showed,
 * in order (0040), null for an export of many. The column `resource_id` of 0021 is still there for
 * the previous release's inserts during a rolling upgrade (a trigger moves it into
 * `resource_ids`); this release never reads or writes it.
 */
export interface PersonalDataAccessTable {
  id: Generated<number>;
  at: ColumnType<Date, Date | string | undefined, never>;
  org_id: string | null;
  mode: 'test' | 'live' | null;
  actor_kind: AccessActorKind;
  actor_id: string | null;
  channel: AccessChannel;
  action: AccessAction;
  resource: string;
  resource_ids: string[] | null;
  ip: string | null;
}

/** The view of the log one line per record shown (0040): `position` is the record's place in its access (1, 2, …). */
export interface PersonalDataAccessRecordsView {
  id: ColumnType<number, never, never>;
  position: ColumnType<number, never, never>;
  at: ColumnType<Date, never, never>;
  org_id: ColumnType<string | null, never, never>;
  mode: ColumnType<'test' | 'live' | null, never, never>;
  actor_kind: ColumnType<AccessActorKind, never, never>;
  actor_id: ColumnType<string | null, never, never>;
  channel: ColumnType<AccessChannel, never, never>;
  action: ColumnType<AccessAction, never, never>;
  resource: ColumnType<string, never, never>;
  resource_id: ColumnType<string | null, never, never>;
  ip: ColumnType<string | null, never, never>;
}

declare module '../platform/db/schema.js' {
  interface DB {
    personal_data_access: PersonalDataAccessTable;
    personal_data_access_records: PersonalDataAccessRecordsView;
  }
}
