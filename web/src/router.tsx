import { createRootRoute, createRoute, createRouter, lazyRouteComponent, Outlet } from '@tanstack/react-router';
import { consoleRoutes } from './console/routes';
import { EmptyState } from './components/states';
import { fieldRoutes } from './field/routes';
import { accountRoutes } from './portal/account/routes';
import { authRoutes } from './portal/auth/routes';
import { billingRoutes } from './portal/billing/routes';
import { brandingRoutes } from './portal/branding/routes';
import { developerRoutes } from './portal/developers/routes';
import { PortalLayout } from './portal/layout';
import { linkRoutes } from './portal/links/routes';
import { screeningRoutes } from './portal/screenings/routes';
import { teamRoutes } from './portal/team/routes';
import { verificationRoutes } from './portal/verifications/routes';

/**
 * Code-based routes: each area of the portal exports its own routes under a parent, so areas grow
 * without a shared generated route file. Every page component is its own lazily loaded chunk.
 */
const rootRoute = createRootRoute({
  component: Outlet,
  notFoundComponent: () => (
    <EmptyState title="Page not found">
      This address does not exist in the portal. Use the navigation, or go back to <a href="/">Get started</a>.
    </EmptyState>
  ),
});

export const portalRoute = createRoute({ getParentRoute: () => rootRoute, id: 'portal', component: PortalLayout });

/** The operator console at /console: its own frame, loaded only by those who open it. */
const consoleRoute = createRoute({ getParentRoute: () => rootRoute, path: '/console', component: lazyRouteComponent(() => import('./console/layout'), 'ConsoleLayout') });

/** The field agents' app at /field: a phone-first frame of its own, installable (web/field-sw). */
const fieldRoute = createRoute({ getParentRoute: () => rootRoute, path: '/field', component: lazyRouteComponent(() => import('./field/layout'), 'FieldLayout') });

const routeTree = rootRoute.addChildren([
  ...authRoutes(rootRoute),
  consoleRoute.addChildren(consoleRoutes(consoleRoute)),
  fieldRoute.addChildren(fieldRoutes(fieldRoute)),
  portalRoute.addChildren([
    ...developerRoutes(portalRoute),
    ...verificationRoutes(portalRoute),
    ...screeningRoutes(portalRoute),
    ...linkRoutes(portalRoute),
    ...billingRoutes(portalRoute),
    ...teamRoutes(portalRoute),
    ...brandingRoutes(portalRoute),
    ...accountRoutes(portalRoute),
  ]),
]);

export const router = createRouter({ routeTree, defaultPreload: 'intent' });

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}

export type RootRoute = typeof rootRoute;
export type PortalRoute = typeof portalRoute;
