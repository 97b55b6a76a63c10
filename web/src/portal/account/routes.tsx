import type { AnyRoute } from '@tanstack/react-router';
import { lazyPage } from '../../lazy-page';
import type { PortalRoute } from '../../router';

export function accountRoutes(parent: PortalRoute): AnyRoute[] {
  return [lazyPage(parent, '/account', () => import('./AccountPage'), 'AccountPage')];
}
