import { Badge, Button, Card, Group, SegmentedControl, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { formatDateTime, formatKobo, Money } from '../../components/format';
import { Pager } from '../../components/layout-parts';
import { EmptyState, ErrorAlert, LoadingState } from '../../components/states';
import { useCurrentOrg } from '../context';
import { DayInput } from '../../components/DayInput';
import { SideScroll } from '../../components/SideScroll';

const LIMIT = 20;
type Kind = 'credit' | 'charge' | 'refund' | 'debit';
const KIND_LABELS: Record<Kind, { label: string; colour: string }> = {
  credit: { label: 'Funding', colour: 'teal' },
  charge: { label: 'Charge', colour: 'gray' },
  refund: { label: 'Refund', colour: 'blue' },
  // Money your account manager took off (a correction); the description says why.
  debit: { label: 'Debit', colour: 'red' },
};

/** Every balance change, newest first: filter by kind and days, page through, download as CSV. */
export function LedgerSection() {
  const { orgId } = useCurrentOrg();
  const [kind, setKind] = useState<Kind | 'all'>('all');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [offset, setOffset] = useState(0);
  const filters = { ...(kind !== 'all' ? { kind } : {}), ...(from ? { from } : {}), ...(to ? { to } : {}) };
  const rangeError = from && to && from > to ? 'The first day must not be after the last' : undefined;
  const ledger = useQuery({
    queryKey: ['ledger', orgId, filters, offset],
    queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/ledger', { params: { path: { orgId }, query: { ...filters, limit: LIMIT, offset } } })),
    placeholderData: keepPreviousData,
    enabled: !rangeError,
  });
  const csv = `/api/orgs/${orgId}/ledger.csv${Object.keys(filters).length ? `?${new URLSearchParams(filters).toString()}` : ''}`;
  const filtered = Object.keys(filters).length > 0;
  const change = <T,>(set: (value: T) => void) => (value: T) => {
    set(value);
    setOffset(0);
  };
  return (
    <Card withBorder component="section" aria-labelledby="ledger-title">
      <Stack gap="sm">
        <Group justify="space-between" wrap="wrap" gap="xs">
          <div>
            <Title order={2} size="h4" id="ledger-title">
              Ledger
            </Title>
            <Text size="sm" c="dimmed">
              Every change to the wallet: fundings, charges for live checks, refunds of cancelled verifications, corrections by your account manager.
            </Text>
          </div>
          <Button component="a" href={csv} download variant="default" size="sm">
            Download CSV
          </Button>
        </Group>
        <Group align="flex-end" gap="sm" wrap="wrap">
          <SegmentedControl
            aria-label="Kind of entry"
            size="xs"
            value={kind}
            onChange={(value) => change(setKind)(value as Kind | 'all')}
            data={[
              { value: 'all', label: 'All' },
              { value: 'credit', label: 'Fundings' },
              { value: 'charge', label: 'Charges' },
              { value: 'refund', label: 'Refunds' },
            ]}
          />
          <DayInput label="From" size="xs" value={from} max={to || undefined} onChange={(day) => change(setFrom)(day)} w={150} />
          <DayInput label="To" size="xs" value={to} min={from || undefined} onChange={(day) => change(setTo)(day)} w={150} error={rangeError} />
          {filtered && (
            <Button variant="subtle" size="xs" onClick={() => (setKind('all'), setFrom(''), setTo(''), setOffset(0))}>
              Clear filters
            </Button>
          )}
        </Group>
        {rangeError ? null : ledger.isPending ? (
          <LoadingState label="Loading the ledger…" />
        ) : ledger.isError ? (
          <ErrorAlert error={ledger.error} onRetry={() => void ledger.refetch()} />
        ) : ledger.data.total === 0 ? (
          filtered ? (
            <EmptyState title="No entries match">Change the kind or the days, or clear the filters.</EmptyState>
          ) : (
            <EmptyState title="No ledger entries">Fundings, charges and refunds of the wallet appear here. Fund the wallet to start.</EmptyState>
          )
        ) : (
          <>
            {/* At phone width the date and kind go under the description, the balance under the amount. */}
            <SideScroll minWidth={300}>
              <Table aria-labelledby="ledger-title" striped verticalSpacing={6}>
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th visibleFrom="sm">Date</Table.Th>
                    <Table.Th visibleFrom="sm">Kind</Table.Th>
                    <Table.Th>Description</Table.Th>
                    <Table.Th ta="right">Amount</Table.Th>
                    <Table.Th ta="right" visibleFrom="sm">
                      Balance after
                    </Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {ledger.data.data.map((entry) => (
                    <Table.Tr key={entry.id}>
                      <Table.Td visibleFrom="sm" style={{ whiteSpace: 'nowrap' }}>
                        {formatDateTime(entry.createdAt)}
                      </Table.Td>
                      <Table.Td visibleFrom="sm">
                        <Badge variant="light" color={KIND_LABELS[entry.kind].colour}>
                          {KIND_LABELS[entry.kind].label}
                        </Badge>
                      </Table.Td>
                      <Table.Td style={{ overflowWrap: 'anywhere' }}>
                        {entry.description}
                        <Text hiddenFrom="sm" size="xs" c="dimmed">
                          {KIND_LABELS[entry.kind].label} · {formatDateTime(entry.createdAt)}
                        </Text>
                      </Table.Td>
                      <Table.Td ta="right">
                        <Money kobo={entry.amount} signed />
                        <Text hiddenFrom="sm" size="xs" c="dimmed" style={{ whiteSpace: 'nowrap' }}>
                          balance {formatKobo(entry.balanceAfter)}
                        </Text>
                      </Table.Td>
                      <Table.Td ta="right" visibleFrom="sm">
                        <Money kobo={entry.balanceAfter} />
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </SideScroll>
            <Pager offset={offset} limit={LIMIT} total={ledger.data.total} onChange={setOffset} />
          </>
        )}
      </Stack>
    </Card>
  );
}
