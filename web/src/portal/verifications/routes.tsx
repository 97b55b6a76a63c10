import type { AnyRoute } from '@tanstack/react-router';
import { lazyPage } from '../../lazy-page';
import type { PortalRoute } from '../../router';

/** The verifications explorer, detail pages and the create forms. */
export function verificationRoutes(parent: PortalRoute): AnyRoute[] {
  const page = (path: string, load: () => Promise<Record<string, unknown>>, name: string) => lazyPage(parent, path, load, name);
  return [
    page('/verifications', () => import('./VerificationsPage'), 'VerificationsPage'),
    page('/verifications/new/address', () => import('./NewVerificationPages'), 'NewAddressPage'),
    page('/verifications/new/guarantor', () => import('./NewVerificationPages'), 'NewGuarantorPage'),
    page('/verifications/sessions/$id', () => import('./SessionDetailPage'), 'SessionDetailPage'),
    page('/verifications/$kind/$id', () => import('./DetailPage'), 'DetailPage'),
  ];
}
