import type { AnyRoute } from '@tanstack/react-router';
import { lazyPage } from '../../lazy-page';
import type { PortalRoute } from '../../router';

export function teamRoutes(parent: PortalRoute): AnyRoute[] {
  return [lazyPage(parent, '/team', () => import('./TeamPage'), 'TeamPage')];
}
