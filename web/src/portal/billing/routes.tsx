import type { AnyRoute } from '@tanstack/react-router';
import { lazyPage } from '../../lazy-page';
import type { PortalRoute } from '../../router';

/** Usage and billing: wallet, ledger, prices, usage chart, funding. */
export function billingRoutes(parent: PortalRoute): AnyRoute[] {
  const page = (path: string, load: () => Promise<Record<string, unknown>>, name: string) => lazyPage(parent, path, load, name);
  return [page('/billing', () => import('./BillingPage'), 'BillingPage'), page('/billing/fund', () => import('./FundPage'), 'FundPage')];
}
