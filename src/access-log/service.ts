import type { FastifyRequest } from 'fastify';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB, Mode } from '../platform/db/schema.js';
import type { AccessAction, AccessActorKind, AccessChannel } from './tables.js';

/**
 * The access log of personal data (issue 12, point 5; docs/data-protection.md, "Access
 * logging"): every view or export of a verification's personal data leaves a row saying who
 * (an API secret, a portal member, an operator, the command line), what (the kind of resource
 * and its internal id), how, when and from which address. The log holds no personal data.
 *
 * One row per access, naming every record it showed (`resource_ids`, in the order shown): a list
 * page is one row, written in one INSERT. Identity lookups are not logged here: they are not views
 * of stored data but checks, recorded as usage rows.
 */

export interface AccessEntry {
  orgId: string | null;
  mode: Mode | null;
  actorKind: AccessActorKind;
  actorId: string | null;
  channel: AccessChannel;
  action: AccessAction;
  resource: string;
  resourceId: string | number | null;
  ip: string | null;
}

/** Kinds of resource whose personal data is logged. */
export const ACCESS_RESOURCES = ['address', 'business', 'guarantor', 'employment', 'session', 'ledger', 'agent_task', 'subject'] as const;

/**
 * Writes the entries, one row per access: entries that differ only in `resourceId` are one access
 * (a page of records shown to one viewer) and share a row, their ids in the order given. An entry
 * with a null id (an export of many) is a row of its own with no ids.
 */
export async function logAccess(db: Kysely<DB>, entries: readonly AccessEntry[]): Promise<void> {
  const accesses = new Map<string, { entry: AccessEntry; ids: string[] | null }>();
  for (const entry of entries) {
    const { resourceId, ...who } = entry;
    if (resourceId === null) {
      accesses.set(`${accesses.size}`, { entry, ids: null });
      continue;
    }
    const key = JSON.stringify(who);
    const access = accesses.get(key);
    if (access) access.ids!.push(String(resourceId));
    else accesses.set(key, { entry, ids: [String(resourceId)] });
  }
  if (accesses.size === 0) return;
  await db
    .insertInto('personal_data_access')
    .values(
      [...accesses.values()].map(({ entry, ids }) => ({
        org_id: entry.orgId,
        mode: entry.mode,
        actor_kind: entry.actorKind,
        actor_id: entry.actorId,
        channel: entry.channel,
        action: entry.action,
        resource: entry.resource,
        resource_ids: ids,
        ip: entry.ip,
      })),
    )
    .execute();
}

/**
 * Who a page of records is shown to, for a list that logs its page in the statement that reads
 * it (`pageBySequence`, the portal's filtered lists): one round trip instead of two, and the page
 * and its log rows commit together, before the answer is sent. `pageBySequence` reads and logs
 * the pages of one table asked for at the same time in one statement, so the `/v1` lists, polled
 * at high rates, pay one commit for the lists in flight.
 */
export interface PageViewer {
  actorKind: AccessActorKind;
  actorId: string | null;
  channel: AccessChannel;
  action: AccessAction;
  resource: string;
  ip: string | null;
}

/** Who sees what an API request (`GET /v1/...`) shows: the secret that read it; a list unless said otherwise. */
export function apiViewer(request: FastifyRequest, resource: string, action: AccessAction = 'list'): PageViewer {
  return { actorKind: 'api', actorId: request.auth.secretId, channel: 'api', action, resource, ip: request.ip };
}

/** The viewer of a portal list: the signed-in member. */
export function sessionViewer(request: FastifyRequest, resource: string): PageViewer {
  return { actorKind: 'member', actorId: request.portal.person.id, channel: 'portal', action: 'list', resource, ip: request.ip };
}

/**
 * The data-modifying CTE that writes the access row of the CTE `page`: one row naming its records
 * (their ids in `idColumn`, in page order by `order`), none for an empty page; to be put in the
 * statement that reads the page (the portal's filtered lists; `pageBySequence` writes its own for
 * the pages it reads together).
 */
export function accessLogOfPage(scope: { orgId: string; mode: Mode }, viewer: PageViewer, idColumn: string, order: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`logged_access as (
    insert into personal_data_access (org_id, mode, actor_kind, actor_id, channel, action, resource, resource_ids, ip)
    select ${scope.orgId}::uuid, ${scope.mode}, ${viewer.actorKind}, ${viewer.actorId}, ${viewer.channel}, ${viewer.action}, ${viewer.resource}, shown.ids, ${viewer.ip}
    from (select array_agg(page.${sql.ref(idColumn)}::text ${order}) as ids from page) shown
    where shown.ids is not null)`;
}

/** An API request's views (`GET /v1/...`): the secret that read them. `ids`: the records shown, in one row. */
export function logApiAccess(db: Kysely<DB>, request: FastifyRequest, resource: string, action: AccessAction, ids: readonly (string | number)[]): Promise<void> {
  const viewer = apiViewer(request, resource, action);
  return logAccess(db, ids.map((id) => ({ orgId: request.auth.orgId, mode: request.auth.mode, ...viewer, resourceId: id })));
}

/** A portal or console request's views: the signed-in person (an operator in the console). */
export function logSessionAccess(
  db: Kysely<DB>,
  request: FastifyRequest,
  scope: { orgId: string | null; mode: Mode | null },
  resource: string,
  action: AccessAction,
  ids: readonly (string | number | null)[],
  channel: 'portal' | 'console' = 'portal',
): Promise<void> {
  return logAccess(
    db,
    ids.map((id) => ({
      ...scope,
      actorKind: channel === 'console' ? 'operator' : 'member',
      actorId: request.portal.person.id,
      channel,
      action,
      resource,
      resourceId: id,
      ip: request.ip,
    })),
  );
}

/**
 * Field tasks shown with their applicant or contact (name, phone, place): to a field agent (the
 * agent API or the field app), an operator (the console) or the command line; one row per
 * organization, mode and kind of task, naming their verifications.
 */
export function logTaskAccess(
  db: Kysely<DB>,
  who: { actorKind: 'agent' | 'operator' | 'cli'; actorId: string | null; channel: AccessChannel; ip: string | null },
  tasks: readonly { kind: string; verificationId: number; orgId: string; mode: Mode | null }[],
  action: AccessAction = 'list',
): Promise<void> {
  return logAccess(db, tasks.map((task) => ({ orgId: task.orgId, mode: task.mode, ...who, action, resource: task.kind, resourceId: task.verificationId })));
}

/** A command-line command that printed personal data. */
export function logCliAccess(db: Kysely<DB>, scope: { orgId: string | null; mode: Mode | null }, resource: string, action: AccessAction, ids: readonly (string | number | null)[]): Promise<void> {
  return logAccess(db, ids.map((id) => ({ ...scope, actorKind: 'cli', actorId: null, channel: 'cli', action, resource, resourceId: id, ip: null })));
}

export interface AccessFilters {
  orgId?: string | undefined;
  resource?: string | undefined;
  resourceId?: string | undefined;
  /** An actor's id: an API secret's or a person's. */
  actorId?: string | undefined;
  actorKind?: AccessActorKind | undefined;
  channel?: AccessChannel | undefined;
  /** Inclusive bounds on `at`. */
  from?: Date | undefined;
  to?: Date | undefined;
}

/** One record shown by one access: a list page's access gives one per record, in page order. */
export interface AccessRow {
  id: number;
  position: number;
  at: string;
  orgId: string | null;
  orgName: string | null;
  mode: Mode | null;
  actor: { kind: AccessActorKind; id: string | null; name: string | null };
  channel: AccessChannel;
  action: AccessAction;
  resource: string;
  resourceId: string | null;
  ip: string | null;
}

/**
 * The log one line per record shown (the view `personal_data_access_records`), newest first,
 * filtered; `total` is exact. For the operator (console, CLI). A record's lines are found through
 * the index on `resource_ids` before the view spreads the accesses into lines.
 */
export async function listAccess(db: Kysely<DB>, filters: AccessFilters, page: { limit: number; offset: number }): Promise<{ rows: AccessRow[]; total: number }> {
  let query = db.selectFrom('personal_data_access_records as a');
  if (filters.orgId) query = query.where('a.org_id', '=', filters.orgId);
  if (filters.resource) query = query.where('a.resource', '=', filters.resource);
  if (filters.resourceId) {
    const id = filters.resourceId;
    query = query
      .where('a.id', 'in', (eb) => eb.selectFrom('personal_data_access').select('id').where(sql<boolean>`resource_ids @> array[${id}]::text[]`))
      .where('a.resource_id', '=', id);
  }
  if (filters.actorId) query = query.where('a.actor_id', '=', filters.actorId);
  if (filters.actorKind) query = query.where('a.actor_kind', '=', filters.actorKind);
  if (filters.channel) query = query.where('a.channel', '=', filters.channel);
  if (filters.from) query = query.where('a.at', '>=', filters.from as never);
  if (filters.to) query = query.where('a.at', '<=', filters.to as never);
  const [rows, count] = await Promise.all([
    query
      .leftJoin('organizations as o', 'o.id', 'a.org_id')
      // Persons are named for people actors only (an API secret's id is no person's).
      .leftJoin('people as p', (join) => join.on(sql<boolean>`a.actor_kind in ('member', 'operator') and p.id::text = a.actor_id`))
      .select(['a.id', 'a.position', 'a.at', 'a.org_id', 'o.name as org_name', 'a.mode', 'a.actor_kind', 'a.actor_id', 'p.name as actor_name', 'a.channel', 'a.action', 'a.resource', 'a.resource_id', 'a.ip'])
      .orderBy('a.at', 'desc')
      .orderBy('a.id', 'desc')
      .orderBy('a.position')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return {
    total: Number(count.n),
    rows: rows.map((row) => ({
      id: Number(row.id),
      position: Number(row.position),
      at: new Date(row.at).toISOString(),
      orgId: row.org_id,
      orgName: row.org_name ?? null,
      mode: row.mode,
      actor: { kind: row.actor_kind, id: row.actor_id, name: row.actor_name ?? null },
      channel: row.channel,
      action: row.action,
      resource: row.resource,
      resourceId: row.resource_id,
      ip: row.ip,
    })),
  };
}
