import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';

/** The wallet summary (balance, pending transfers, bank details), shared by the billing and fund pages. */
export function useBilling(orgId: string) {
  return useQuery({ queryKey: ['billing', orgId], queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/billing', { params: { path: { orgId } } })) });
}
