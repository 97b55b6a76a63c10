import { Anchor, Button, Card, Group, NativeSelect, Stack, Table, Tabs, Text, TextInput, Title } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { useState } from 'react';
import { api, unwrap } from '../../api/client';
import { formatDateTime } from '../../components/format';
import { PageHeader, Pager } from '../../components/layout-parts';
import { EmptyState, ErrorAlert, LoadingState } from '../../components/states';
import { useCurrentOrg, useMode } from '../context';
import { useCompact } from '../verifications/parts';
import { MonitoredBadge, ScreeningStatus, STATE_LABELS, type Screening, type ScreeningState } from './labels';
import { ScreeningSettingSection } from './ScreeningSettingSection';
import { DayInput } from '../../components/DayInput';

const LIMIT = 20;
const TABS = ['all', 'monitored'] as const;

/** The Screenings area: every screening with a status filter, the monitored subjects, the NFIU export and the organization's setting. */
export function ScreeningsPage() {
  const [mode] = useMode();
  const search = useSearch({ strict: false }) as { tab?: unknown };
  const navigate = useNavigate();
  const tab = search.tab === 'monitored' ? 'monitored' : 'all';
  const setTab = (value: string | null) =>
    void navigate({ to: '/screenings', search: (value === 'monitored' ? { tab: value } : {}) as never, replace: true });
  return (
    <Stack gap="lg">
      <PageHeader
        title="Screenings"
        description={`People and organizations screened in ${mode} mode against sanctions, PEP and watchlists: review each possible match, and follow the subjects you monitor.`}
      />
      <Tabs value={tab} onChange={setTab} keepMounted={false}>
        <Tabs.List>
          <Tabs.Tab value={TABS[0]}>All screenings</Tabs.Tab>
          <Tabs.Tab value={TABS[1]}>Monitored subjects</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="all" pt="md">
          <ScreeningList />
        </Tabs.Panel>
        <Tabs.Panel value="monitored" pt="md">
          <MonitoredList />
        </Tabs.Panel>
      </Tabs>
      <ExportSection />
      <ScreeningSettingSection />
    </Stack>
  );
}

function ScreeningList() {
  const { orgId } = useCurrentOrg();
  const [mode] = useMode();
  const [state, setState] = useState<ScreeningState | 'all'>('all');
  const [offset, setOffset] = useState(0);
  const query = { mode, status: state === 'all' ? undefined : state, limit: LIMIT, offset };
  const list = useQuery({
    queryKey: ['screenings', orgId, query],
    queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/screenings', { params: { path: { orgId }, query } })),
    placeholderData: keepPreviousData,
  });
  return (
    <Stack>
      <NativeSelect
        label="Status"
        value={state}
        onChange={(e) => (setState(e.currentTarget.value as ScreeningState | 'all'), setOffset(0))}
        data={[{ value: 'all', label: 'All statuses' }, ...Object.entries(STATE_LABELS).map(([value, label]) => ({ value, label }))]}
        w={{ base: '100%', xs: 220 }}
      />
      {list.isPending ? (
        <LoadingState label="Loading screenings…" />
      ) : list.isError ? (
        <ErrorAlert error={list.error} onRetry={() => void list.refetch()} />
      ) : list.data.total === 0 ? (
        state !== 'all' ? (
          <EmptyState title="Nothing matches" action={<Button variant="light" onClick={() => (setState('all'), setOffset(0))}>Show all statuses</Button>}>
            No {mode}-mode screening is {STATE_LABELS[state].toLowerCase()}.
          </EmptyState>
        ) : (
          <EmptyState title={`No screenings in ${mode} mode yet`} action={<Anchor component={Link} to="/">API examples on Get started</Anchor>}>
            {mode === 'test'
              ? 'Screen someone with POST /v1/verifications/screenings and your test secret: the sandbox subjects in docs/screening.md always hit the sandbox list. Each screening shows up here.'
              : 'Screenings made with your live secret, or by sessions and lookups when screening is turned on below, show up here.'}
          </EmptyState>
        )
      ) : (
        <>
          <ScreeningTable rows={list.data.data} label="Screenings" />
          <Pager offset={offset} limit={LIMIT} total={list.data.total} onChange={setOffset} />
        </>
      )}
    </Stack>
  );
}

function MonitoredList() {
  const { orgId } = useCurrentOrg();
  const [mode] = useMode();
  const [offset, setOffset] = useState(0);
  const query = { mode, limit: LIMIT, offset };
  const list = useQuery({
    queryKey: ['screenings', orgId, 'monitored', query],
    queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/screenings/monitored', { params: { path: { orgId }, query } })),
    placeholderData: keepPreviousData,
  });
  if (list.isPending) return <LoadingState label="Loading monitored subjects…" />;
  if (list.isError) return <ErrorAlert error={list.error} onRetry={() => void list.refetch()} />;
  if (list.data.total === 0) {
    return (
      <EmptyState title={`No monitored subjects in ${mode} mode`}>
        Send monitor: true when you screen someone: Vouch screens them again whenever a list they were screened against changes, and a new hit sends the screening.match webhook and comes back here for review.
      </EmptyState>
    );
  }
  return (
    <Stack>
      <Text size="sm" c="dimmed">
        Screened again at every change of their lists. End monitoring with DELETE /v1/verifications/screenings/:id.
      </Text>
      <ScreeningTable rows={list.data.data} label="Monitored subjects" />
      <Pager offset={offset} limit={LIMIT} total={list.data.total} onChange={setOffset} />
    </Stack>
  );
}

function ScreeningTable({ rows, label }: { rows: Screening[]; label: string }) {
  const compact = useCompact();
  const navigate = useNavigate();
  const open = (id: number) => void navigate({ to: `/screenings/${id}` });
  return (
    <Table aria-label={label} highlightOnHover verticalSpacing="xs">
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Subject</Table.Th>
          <Table.Th>Status</Table.Th>
          {!compact && <Table.Th ta="right">Hits</Table.Th>}
          {!compact && <Table.Th>Reference</Table.Th>}
          {!compact && <Table.Th>Screened</Table.Th>}
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {rows.map((row) => (
          <Table.Tr key={row.id} style={{ cursor: 'pointer' }} onClick={() => open(row.id)}>
            <Table.Td style={{ overflowWrap: 'anywhere' }}>
              <Anchor component={Link} to={`/screenings/${row.id}`} onClick={(e: React.MouseEvent) => e.stopPropagation()} size="sm">
                {row.subject.name}
              </Anchor>
              <Text size="xs" c="dimmed">
                {row.subject.type === 'organization' ? 'Organization' : 'Person'}
                {compact ? ` · ${row.reference}` : ''}
              </Text>
            </Table.Td>
            <Table.Td>
              <Group gap={4}>
                <ScreeningStatus status={row.status} />
                {row.monitored && <MonitoredBadge />}
              </Group>
              {compact && (
                <Text size="xs" c="dimmed">
                  {row.hits.length} {row.hits.length === 1 ? 'hit' : 'hits'} · {formatDateTime(`${row.createdAt}Z`)}
                </Text>
              )}
            </Table.Td>
            {!compact && <Table.Td ta="right">{row.hits.length}</Table.Td>}
            {!compact && (
              <Table.Td ff="monospace" style={{ overflowWrap: 'anywhere' }}>
                {row.reference}
              </Table.Td>
            )}
            {!compact && <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatDateTime(`${row.createdAt}Z`)}</Table.Td>}
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The confirmed name matches as CSV for the NFIU report: a plain link, so the browser downloads it with the session cookie. */
function ExportSection() {
  const { orgId } = useCurrentOrg();
  const [mode] = useMode();
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const badRange = DAY.test(from) && DAY.test(to) && from > to;
  const params = new URLSearchParams({ mode });
  if (DAY.test(from)) params.set('from', from);
  if (DAY.test(to)) params.set('to', to);
  const href = `/api/orgs/${orgId}/screenings/export.csv?${params.toString()}`;
  return (
    <Card withBorder component="section" aria-labelledby="screening-export-title">
      <Stack gap="sm">
        <div>
          <Title order={2} size="h4" id="screening-export-title">
            Export confirmed matches
          </Title>
          <Text size="sm" c="dimmed">
            Every hit reviewed a true match, with the subject, the list entry, the list and its version, the score and who confirmed it: what the NFIU report asks for. Days are UTC; leave them empty for all.
          </Text>
        </div>
        <Group align="flex-end" wrap="wrap" gap="sm">
          <DayInput label="Confirmed from" value={from} onChange={(day) => setFrom(day)} w={{ base: 'calc(50% - 6px)', xs: 170 }} />
          <DayInput
            label="Confirmed to"
            value={to}
            onChange={(day) => setTo(day)}
            error={badRange ? 'Pick a day on or after the first' : undefined}
            w={{ base: 'calc(50% - 6px)', xs: 170 }}
          />
          {badRange ? (
            <Button disabled>Download the CSV</Button>
          ) : (
            <Button component="a" href={href} download variant="light">
              Download the CSV
            </Button>
          )}
        </Group>
      </Stack>
    </Card>
  );
}
