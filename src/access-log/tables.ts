import type { ColumnType, Generated } from 'kysely';

export type AccessActorKind = 'api' | 'member' | 'operator' | 'agent' | 'cli';
export type AccessChannel = 'api' | 'portal' | 'console' | 'field' | 'cli';
export type AccessAction = 'view' | 'list' | 'export';

/** One view or export of personal data (0021; issue 12, point 5): who, what, how, when, from where; no personal data itself. */
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
  resource_id: string | null;
  ip: string | null;
}

declare module '../platform/db/schema.js' {
  interface DB {
    personal_data_access: PersonalDataAccessTable;
  }
}
