import type { AnyRoute } from '@tanstack/react-router';
import { lazyPage } from '../../lazy-page';
import type { PortalRoute } from '../../router';

/** Verification links: shareable links and QR codes that start sessions (docs/sessions.md). */
export function linkRoutes(parent: PortalRoute): AnyRoute[] {
  return [lazyPage(parent, '/links', () => import('./LinksPage'), 'LinksPage')];
}
