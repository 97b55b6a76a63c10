import type { AnyRoute } from '@tanstack/react-router';
import { lazyPage } from '../../lazy-page';
import type { PortalRoute } from '../../router';

/** The Screenings area: the list (with the monitored subjects, the export and the setting) and a screening's page. */
export function screeningRoutes(parent: PortalRoute): AnyRoute[] {
  return [
    lazyPage(parent, '/screenings', () => import('./ScreeningsPage'), 'ScreeningsPage'),
    lazyPage(parent, '/screenings/$id', () => import('./ScreeningPage'), 'ScreeningPage'),
  ];
}
