import type { Role } from './tables.js';

/**
 * What each member role may do in its organization. The server checks these on every `/api`
 * route; the web app only hides what the server would refuse.
 */
export type Permission =
  | 'org.read'
  | 'secrets.test.read'
  | 'secrets.roll'
  | 'webhooks.read'
  | 'webhooks.manage'
  | 'verifications.read'
  | 'verifications.write'
  | 'billing.read'
  | 'billing.fund'
  | 'access.request'
  | 'team.read'
  | 'team.manage'
  | 'branding.manage';

const VIEWER: readonly Permission[] = ['org.read', 'webhooks.read', 'verifications.read', 'billing.read', 'team.read'];
const DEVELOPER: readonly Permission[] = [...VIEWER, 'secrets.test.read', 'secrets.roll', 'webhooks.manage', 'verifications.write'];
const ADMIN: readonly Permission[] = [...DEVELOPER, 'billing.fund', 'access.request', 'team.manage', 'branding.manage'];

export const PERMISSIONS: Readonly<Record<Role, ReadonlySet<Permission>>> = {
  owner: new Set(ADMIN),
  admin: new Set(ADMIN),
  developer: new Set(DEVELOPER),
  viewer: new Set(VIEWER),
};

export function can(role: Role, permission: Permission): boolean {
  return PERMISSIONS[role].has(permission);
}

/** The permissions of a role as a sorted list, for the web app. */
export function permissionsOf(role: Role): Permission[] {
  return [...PERMISSIONS[role]].sort();
}
