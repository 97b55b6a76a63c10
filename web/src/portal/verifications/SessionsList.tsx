import { Anchor, Badge, Button, Group, Select, Stack, Table, Text, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import type { operations } from '../../api/schema';
import { formatDateTime } from '../../components/format';
import { Pager } from '../../components/layout-parts';
import { EmptyState, ErrorAlert, LoadingState } from '../../components/states';
import { useCurrentOrg, useMode } from '../context';
import { useCompact } from './parts';

type SessionFilter = NonNullable<NonNullable<operations['portalListVerificationSessions']['parameters']['query']>['status']>;
export type SessionStatus = operations['portalGetVerificationSession']['responses'][200]['content']['application/json']['status'];

const LIMIT = 20;

export const SESSION_STATUS_LABELS: Record<SessionStatus, string> = {
  created: 'Not opened yet',
  in_progress: 'In progress',
  verified: 'Verified',
  failed: 'Not verified',
  expired: 'Expired',
  cancelled: 'Cancelled',
};
const SESSION_STATUS_COLOURS: Record<SessionStatus, string> = { created: 'blue', in_progress: 'blue', verified: 'teal', failed: 'red', expired: 'gray', cancelled: 'gray' };
const FILTER_LABELS: Record<SessionFilter, string> = { in_progress: 'In progress', verified: 'Verified', failed: 'Not verified', expired: 'Expired', cancelled: 'Cancelled' };

/** A session's state as a coloured badge; the words are the meaning. */
export function SessionStatusPill({ status }: { status: SessionStatus }) {
  return (
    <Badge variant="light" color={SESSION_STATUS_COLOURS[status] ?? 'gray'}>
      {SESSION_STATUS_LABELS[status] ?? status}
    </Badge>
  );
}

/** The explorer's Sessions tab: the mode's verification sessions, filtered by state or reference, paged. */
export function SessionsList() {
  const compact = useCompact();
  const { orgId } = useCurrentOrg();
  const [mode] = useMode();
  const navigate = useNavigate();
  const [status, setStatus] = useState<SessionFilter | null>(null);
  const [searchText, setSearchText] = useState('');
  const [q] = useDebouncedValue(searchText.trim(), 300);
  const [offset, setOffset] = useState(0);
  const query = { mode, status: status ?? undefined, q: q || undefined, limit: LIMIT, offset };
  const list = useQuery({
    queryKey: ['sessions', orgId, query],
    queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/sessions', { params: { path: { orgId }, query } })),
    placeholderData: keepPreviousData,
  });
  const open = (id: string) => void navigate({ to: `/verifications/sessions/${id}` });
  return (
    <Stack>
      <Group align="flex-start" wrap="wrap" gap="sm">
        <Select
          label="Status"
          placeholder="Any status"
          clearable
          data={Object.entries(FILTER_LABELS).map(([value, label]) => ({ value, label }))}
          value={status}
          onChange={(v) => (setStatus(v as SessionFilter | null), setOffset(0))}
          w={{ base: 'calc(50% - 6px)', xs: 180 }}
        />
        <TextInput
          label="Search"
          description="Reference (or its start), or session id"
          value={searchText}
          onChange={(e) => (setSearchText(e.currentTarget.value), setOffset(0))}
          w={{ base: 'calc(50% - 6px)', xs: 260 }}
        />
      </Group>
      {list.isPending ? (
        <LoadingState label="Loading sessions…" />
      ) : list.isError ? (
        <ErrorAlert error={list.error} onRetry={() => void list.refetch()} />
      ) : list.data.total === 0 ? (
        status || q ? (
          <EmptyState title="Nothing matches" action={<Button variant="light" onClick={() => (setStatus(null), setSearchText(''), setOffset(0))}>Clear the filters</Button>}>
            No {mode}-mode session matches these filters.
          </EmptyState>
        ) : (
          <EmptyState title={`No sessions in ${mode} mode yet`} action={<Anchor component={Link} to="/">API examples on Get started</Anchor>}>
            Create one with POST /v1/verifications/sessions and send the person its url; it shows up here with each step, the liveness attempts and the webhooks.
          </EmptyState>
        )
      ) : (
        <>
          <Table aria-label="Sessions" highlightOnHover verticalSpacing="xs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Reference</Table.Th>
                {!compact && <Table.Th>Person</Table.Th>}
                <Table.Th>Status</Table.Th>
                {!compact && <Table.Th>Created</Table.Th>}
                {!compact && <Table.Th>Ended</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.data.data.map((row) => (
                <Table.Tr key={row.id} style={{ cursor: 'pointer' }} onClick={() => open(row.id)}>
                  <Table.Td style={{ overflowWrap: 'anywhere' }}>
                    <Anchor component={Link} to={`/verifications/sessions/${row.id}`} onClick={(e: React.MouseEvent) => e.stopPropagation()} ff="monospace" size="sm">
                      {row.reference}
                    </Anchor>
                    {compact && row.subject && <Text size="sm">{row.subject}</Text>}
                  </Table.Td>
                  {!compact && <Table.Td>{row.subject || '—'}</Table.Td>}
                  <Table.Td>
                    <SessionStatusPill status={row.status} />
                    <Text size="xs" c="dimmed">
                      {row.subStatus}
                    </Text>
                    {compact && (
                      <Text size="xs" c="dimmed">
                        {formatDateTime(row.endedAt ?? row.createdAt)}
                      </Text>
                    )}
                  </Table.Td>
                  {!compact && <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatDateTime(row.createdAt)}</Table.Td>}
                  {!compact && <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatDateTime(row.endedAt)}</Table.Td>}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <Pager offset={offset} limit={LIMIT} total={list.data.total} onChange={setOffset} />
          {list.data.totalCapped && (
            <Text size="sm" c="dimmed">
              More than {list.data.total.toLocaleString('en-NG')} match: narrow the search to reach older ones, or clear the filters to page through all.
            </Text>
          )}
        </>
      )}
      <Text size="xs" c="dimmed">
        ID numbers are shown masked: first three and last two characters.
      </Text>
    </Stack>
  );
}
