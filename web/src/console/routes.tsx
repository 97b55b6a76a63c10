import type { AnyRoute } from '@tanstack/react-router';
import { lazyPage } from '../lazy-page';

export function consoleRoutes(parent: AnyRoute): AnyRoute[] {
  return [
    lazyPage(parent, '/', () => import('./AccessRequestsPage'), 'AccessRequestsPage'),
    lazyPage(parent, '/organizations', () => import('./OrganizationsPage'), 'OrganizationsPage'),
    lazyPage(parent, '/organizations/$orgId', () => import('./OrganizationPage'), 'OrganizationPage'),
    lazyPage(parent, '/prices', () => import('./PricesPage'), 'PricesPage'),
    lazyPage(parent, '/fundings', () => import('./FundingsPage'), 'FundingsPage'),
    lazyPage(parent, '/agents', () => import('./AgentsPage'), 'AgentsPage'),
    lazyPage(parent, '/agents/$agentId', () => import('./AgentPage'), 'AgentPage'),
    lazyPage(parent, '/reviews', () => import('./ReviewQueuePage'), 'ReviewQueuePage'),
    lazyPage(parent, '/deliveries', () => import('./DeliveriesPage'), 'DeliveriesPage'),
    lazyPage(parent, '/audit', () => import('./AuditLogPage'), 'AuditLogPage'),
    lazyPage(parent, '/access-log', () => import('./AccessLogPage'), 'AccessLogPage'),
    lazyPage(parent, '/sessions', () => import('./SessionsPage'), 'SessionsPage'),
    lazyPage(parent, '/watchlists', () => import('./ListsPage'), 'ListsPage'),
  ];
}
