import type { AnyRoute } from '@tanstack/react-router';
import { lazyPage } from '../../lazy-page';
import type { PortalRoute } from '../../router';

/** The verification flow's branding and session defaults. */
export function brandingRoutes(parent: PortalRoute): AnyRoute[] {
  return [lazyPage(parent, '/verification-flow', () => import('./BrandingPage'), 'BrandingPage')];
}
