import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import type { Mode } from '../context';
import type { DeliveryStatus } from './types';

/** Query keys of this area, so a change invalidates exactly what it affects. */
export const keys = {
  access: (orgId: string) => ['access', orgId] as const,
  keys: (orgId: string) => ['keys', orgId] as const,
  endpoint: (orgId: string, mode: Mode) => ['webhook', orgId, mode] as const,
  deliveries: (orgId: string, mode: Mode) => ['deliveries', orgId, mode] as const,
  delivery: (orgId: string, mode: Mode, id: number) => ['deliveries', orgId, mode, 'one', id] as const,
  sandbox: (orgId: string) => ['sandbox-messages', orgId] as const,
};

export function useAccess(orgId: string) {
  return useQuery({ queryKey: keys.access(orgId), queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/access', { params: { path: { orgId } } })) });
}

export function useKeys(orgId: string) {
  return useQuery({ queryKey: keys.keys(orgId), queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/keys', { params: { path: { orgId } } })) });
}

export function useEndpoint(orgId: string, mode: Mode) {
  return useQuery({
    queryKey: keys.endpoint(orgId, mode),
    queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/webhooks', { params: { path: { orgId }, query: { mode } } })),
  });
}

export const LOG_PAGE = 20;

/** One page of the delivery log; refreshed every few seconds while the page is open, so new events and retries show up. */
export function useDeliveries(orgId: string, mode: Mode, filter: { status: DeliveryStatus | undefined; offset: number }) {
  return useQuery({
    queryKey: [...keys.deliveries(orgId, mode), filter.status ?? 'all', filter.offset],
    queryFn: () =>
      unwrap(api.GET('/api/orgs/{orgId}/webhook-deliveries', { params: { path: { orgId }, query: { mode, status: filter.status, limit: LOG_PAGE, offset: filter.offset } } })),
    placeholderData: keepPreviousData,
    refetchInterval: 5_000,
  });
}

export const SANDBOX_PAGE = 20;

/** One page of the sandbox outbox (test-mode messages to respondents, newest first); refreshed while open, as new test verifications add messages. */
export function useSandboxMessages(orgId: string, offset: number) {
  return useQuery({
    queryKey: [...keys.sandbox(orgId), offset],
    queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/sandbox/messages', { params: { path: { orgId }, query: { limit: SANDBOX_PAGE, offset } } })),
    placeholderData: keepPreviousData,
    refetchInterval: 10_000,
  });
}

export function useDelivery(orgId: string, mode: Mode, id: number) {
  return useQuery({
    queryKey: keys.delivery(orgId, mode, id),
    queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/webhook-deliveries/{deliveryId}', { params: { path: { orgId, deliveryId: String(id) }, query: { mode } } })),
    // A resent or retrying delivery changes under the reader's eyes.
    refetchInterval: (query) => (query.state.data?.status === 'pending' ? 2_000 : false),
  });
}
