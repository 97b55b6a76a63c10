import { Anchor, Badge, Button, Group, Select, Stack, Table, Tabs, Text, TextInput } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { useState, type ReactNode } from 'react';
import { api, unwrap } from '../../api/client';
import { formatDateTime, Money } from '../../components/format';
import { PageHeader } from '../../components/layout-parts';
import { EmptyState, ErrorAlert, LoadingState } from '../../components/states';
import { useCurrentOrg, useMode } from '../context';
import { StatusPill, useCompact } from './parts';
import { SessionsList } from './SessionsList';
import { isKind, KINDS, LOOKUP_TYPE_LABELS, lookupTypeLabel, OUTCOME_LABELS, STATUS_LABELS, type ExplorerStatus, type Kind, type LookupOutcome, type LookupType } from './labels';
import { DayInput } from '../../components/DayInput';

const LIMIT = 20;

const OUTCOME_COLOURS: Record<string, string> = { success: 'teal', not_found: 'gray', insufficient_funds: 'orange' };

/** "21–40 of 312", or "of 10,000+" when the server stopped counting; previous and next pages. */
function Pager({ offset, limit, total, capped, shown, onChange }: { offset: number; limit: number; total: number; capped: boolean; shown: number; onChange(offset: number): void }) {
  const last = offset + shown;
  return (
    <Group justify="space-between" mt="sm" wrap="wrap">
      <Text size="sm" c="dimmed" aria-live="polite">
        {shown === 0 ? 'No rows on this page' : `${(offset + 1).toLocaleString('en-NG')}–${last.toLocaleString('en-NG')}`} of {total.toLocaleString('en-NG')}
        {capped ? '+' : ''}
      </Text>
      <Group gap="xs">
        <Button variant="default" size="xs" disabled={offset === 0} onClick={() => onChange(Math.max(0, offset - limit))}>
          Previous page
        </Button>
        <Button variant="default" size="xs" disabled={last >= total} onClick={() => onChange(offset + limit)}>
          Next page
        </Button>
      </Group>
    </Group>
  );
}

export function VerificationsPage() {
  const { can } = useCurrentOrg();
  const [mode] = useMode();
  const search = useSearch({ strict: false }) as { tab?: unknown };
  const navigate = useNavigate();
  const tab = isKind(search.tab) || search.tab === 'sessions' ? search.tab : 'lookups';
  const setTab = (value: string | null) => void navigate({ to: '/verifications', search: (value && value !== 'lookups' ? { tab: value } : {}) as never, replace: true });
  return (
    <Stack gap="lg">
      <PageHeader
        title="Verifications"
        description={`Every identity lookup and verification made in ${mode} mode, through the API or here.`}
        actions={
          can('verifications.write') && (
            <>
              <Button component={Link} to="/verifications/new/address" variant="light">
                New address verification
              </Button>
              <Button component={Link} to="/verifications/new/guarantor" variant="light">
                New guarantor verification
              </Button>
            </>
          )
        }
      />
      <Tabs value={tab} onChange={setTab} keepMounted={false}>
        <Tabs.List>
          <Tabs.Tab value="lookups">Identity lookups</Tabs.Tab>
          <Tabs.Tab value="sessions">Sessions</Tabs.Tab>
          {KINDS.map((k) => (
            <Tabs.Tab key={k.value} value={k.value}>
              {k.tab}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        <Tabs.Panel value="lookups" pt="md">
          <LookupList />
        </Tabs.Panel>
        <Tabs.Panel value="sessions" pt="md">
          <SessionsList />
        </Tabs.Panel>
        {KINDS.map((k) => (
          <Tabs.Panel key={k.value} value={k.value} pt="md">
            <WorkflowList kind={k.value} label={k.tab} />
          </Tabs.Panel>
        ))}
      </Tabs>
    </Stack>
  );
}

/** A date input's day as the instant it starts in the person's time zone; the end of a range is the next day's start. */
function dayStart(day: string, plusDays = 0): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined;
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return new Date(y, m - 1, d + plusDays).toISOString();
}

function OutcomeBadge({ outcome }: { outcome: LookupOutcome }) {
  return (
    <Badge variant="light" color={OUTCOME_COLOURS[outcome] ?? 'gray'}>
      {OUTCOME_LABELS[outcome] ?? outcome}
    </Badge>
  );
}

function LookupList() {
  const compact = useCompact();
  const { orgId } = useCurrentOrg();
  const [mode] = useMode();
  const [type, setType] = useState<LookupType | null>(null);
  const [outcome, setOutcome] = useState<LookupOutcome | null>(null);
  const [searchText, setSearchText] = useState('');
  const [q] = useDebouncedValue(searchText.trim(), 300);
  const [fromDay, setFromDay] = useState('');
  const [toDay, setToDay] = useState('');
  const [offset, setOffset] = useState(0);
  const from = dayStart(fromDay);
  const to = dayStart(toDay, 1);
  const badRange = from !== undefined && to !== undefined && from >= to;
  const query = { mode, type: type ?? undefined, outcome: outcome ?? undefined, q: q || undefined, from, to: badRange ? undefined : to, limit: LIMIT, offset };
  const filtered = Boolean(type || outcome || q || from || to);
  const lookups = useQuery({
    queryKey: ['lookups', orgId, query],
    queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/lookups', { params: { path: { orgId }, query } })),
    placeholderData: keepPreviousData,
  });
  const reset = (fn: () => void) => () => {
    fn();
    setOffset(0);
  };
  const clear = reset(() => {
    setType(null);
    setOutcome(null);
    setSearchText('');
    setFromDay('');
    setToDay('');
  });
  return (
    <Stack>
      <Group align="flex-start" wrap="wrap" gap="sm">
        <Select
          label="Type"
          placeholder="All types"
          clearable
          data={Object.entries(LOOKUP_TYPE_LABELS).map(([value, label]) => ({ value, label }))}
          value={type}
          onChange={(v) => reset(() => setType(v as LookupType | null))()}
          w={{ base: 'calc(50% - 6px)', xs: 180 }}
        />
        <Select
          label="Outcome"
          placeholder="All outcomes"
          clearable
          data={Object.entries(OUTCOME_LABELS).map(([value, label]) => ({ value, label }))}
          value={outcome}
          onChange={(v) => reset(() => setOutcome(v as LookupOutcome | null))()}
          w={{ base: 'calc(50% - 6px)', xs: 160 }}
        />
        <TextInput
          label="Search"
          description="Whole number, or its first digits"
          placeholder="e.g. 223"
          value={searchText}
          onChange={(e) => reset(() => setSearchText(e.currentTarget.value))()}
          w={{ base: '100%', xs: 220 }}
        />
        <DayInput label="From" value={fromDay} onChange={(day) => reset(() => setFromDay(day))()} w={{ base: 'calc(50% - 6px)', xs: 160 }} />
        <DayInput
          label="To"
          value={toDay}
          onChange={(day) => reset(() => setToDay(day))()}
          error={badRange ? 'Pick a day on or after From' : undefined}
          w={{ base: 'calc(50% - 6px)', xs: 160 }}
        />
      </Group>
      {lookups.isPending ? (
        <LoadingState label="Loading lookups…" />
      ) : lookups.isError ? (
        <ErrorAlert error={lookups.error} onRetry={() => void lookups.refetch()} />
      ) : lookups.data.total === 0 ? (
        filtered ? (
          <EmptyState title="Nothing matches" action={<Button variant="light" onClick={clear}>Clear the filters</Button>}>
            No {mode}-mode lookup matches these filters.
          </EmptyState>
        ) : (
          <EmptyState title={`No identity lookups in ${mode} mode yet`} action={<Anchor component={Link} to="/">See how on Get started</Anchor>}>
            {mode === 'test'
              ? 'Call /v1/verifications/identities/… with your test secret (the curl examples on Get started work as they are) and each lookup shows up here, its number masked.'
              : 'Lookups made with your live secret appear here, their numbers masked. Test mode shows the sandbox lookups.'}
          </EmptyState>
        )
      ) : (
        <>
          {compact ? (
            <Table aria-label="Identity lookups" striped verticalSpacing="xs">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Lookup</Table.Th>
                  <Table.Th>Outcome</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {lookups.data.data.map((row) => (
                  <Table.Tr key={row.id}>
                    <Table.Td>
                      <Text size="sm">{lookupTypeLabel(row.type)}</Text>
                      <Text size="sm" ff="monospace">
                        {row.subject}
                      </Text>
                    </Table.Td>
                    <Table.Td>
                      <OutcomeBadge outcome={row.outcome} />
                      <Text size="xs" c="dimmed">
                        <Money kobo={row.price} /> · {formatDateTime(row.createdAt)}
                      </Text>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          ) : (
            <Table aria-label="Identity lookups" striped verticalSpacing="xs">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Type</Table.Th>
                  <Table.Th>Number</Table.Th>
                  <Table.Th>Outcome</Table.Th>
                  <Table.Th ta="right">Price</Table.Th>
                  <Table.Th>Time</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {lookups.data.data.map((row) => (
                  <Table.Tr key={row.id}>
                    <Table.Td>{lookupTypeLabel(row.type)}</Table.Td>
                    <Table.Td ff="monospace">{row.subject}</Table.Td>
                    <Table.Td>
                      <OutcomeBadge outcome={row.outcome} />
                    </Table.Td>
                    <Table.Td ta="right">
                      <Money kobo={row.price} />
                    </Table.Td>
                    <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatDateTime(row.createdAt)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
          <Pager offset={offset} limit={LIMIT} total={lookups.data.total} capped={lookups.data.totalCapped} shown={lookups.data.data.length} onChange={setOffset} />
          {lookups.data.totalCapped && (
            <Text size="sm" c="dimmed">
              More than {lookups.data.total.toLocaleString('en-NG')} lookups match: the list pages through the newest {lookups.data.total.toLocaleString('en-NG')}. Pick dates to reach older ones.
            </Text>
          )}
        </>
      )}
      <Text size="xs" c="dimmed">
        Identity numbers are never stored whole: the list shows their first three and last two characters.
      </Text>
    </Stack>
  );
}

function WorkflowEmpty({ kind, label, mode }: { kind: Kind; label: string; mode: string }) {
  const { can } = useCurrentOrg();
  const form: Partial<Record<Kind, ReactNode>> = {
    address: (
      <Button component={Link} to="/verifications/new/address">
        New address verification
      </Button>
    ),
    guarantor: (
      <Button component={Link} to="/verifications/new/guarantor">
        New guarantor verification
      </Button>
    ),
  };
  const path = `/v1/verifications/${kind === 'address' ? 'addresses' : kind === 'business' ? 'businesses' : `${kind}s`}`;
  return (
    <EmptyState
      title={`No ${label.toLowerCase()} in ${mode} mode yet`}
      action={
        <Group justify="center">
          {can('verifications.write') && form[kind]}
          <Anchor component={Link} to="/">
            API examples on Get started
          </Anchor>
        </Group>
      }
    >
      Create one with POST {path}
      {form[kind] && can('verifications.write') ? ' or with the form' : ''}; it shows up here with its status, and its page has the timeline and webhooks.
    </EmptyState>
  );
}

function WorkflowList({ kind, label }: { kind: Kind; label: string }) {
  const compact = useCompact();
  const { orgId } = useCurrentOrg();
  const [mode] = useMode();
  const navigate = useNavigate();
  const [status, setStatus] = useState<ExplorerStatus | null>(null);
  const [searchText, setSearchText] = useState('');
  const [q] = useDebouncedValue(searchText.trim(), 300);
  const [offset, setOffset] = useState(0);
  const query = { mode, kind, status: status ?? undefined, q: q || undefined, limit: LIMIT, offset };
  const list = useQuery({
    queryKey: ['verifications', orgId, query],
    queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/verifications', { params: { path: { orgId }, query } })),
    placeholderData: keepPreviousData,
  });
  const open = (id: number) => void navigate({ to: `/verifications/${kind}/${id}` });
  return (
    <Stack>
      <Group align="flex-start" wrap="wrap" gap="sm">
        <Select
          label="Status"
          placeholder="Any status"
          clearable
          data={Object.entries(STATUS_LABELS).map(([value, text]) => ({ value, label: text }))}
          value={status}
          onChange={(v) => (setStatus(v as ExplorerStatus | null), setOffset(0))}
          w={{ base: 'calc(50% - 6px)', xs: 180 }}
        />
        <TextInput
          label="Search"
          description="Reference (or its start), or id"
          value={searchText}
          onChange={(e) => (setSearchText(e.currentTarget.value), setOffset(0))}
          w={{ base: 'calc(50% - 6px)', xs: 240 }}
        />
      </Group>
      {list.isPending ? (
        <LoadingState label={`Loading ${label.toLowerCase()}…`} />
      ) : list.isError ? (
        <ErrorAlert error={list.error} onRetry={() => void list.refetch()} />
      ) : list.data.total === 0 ? (
        status || q ? (
          <EmptyState title="Nothing matches" action={<Button variant="light" onClick={() => (setStatus(null), setSearchText(''), setOffset(0))}>Clear the filters</Button>}>
            No {mode}-mode {label.toLowerCase()} match these filters.
          </EmptyState>
        ) : (
          <WorkflowEmpty kind={kind} label={label} mode={mode} />
        )
      ) : (
        <>
          <Table aria-label={label} highlightOnHover verticalSpacing="xs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Reference</Table.Th>
                {!compact && <Table.Th>Subject</Table.Th>}
                <Table.Th>Status</Table.Th>
                {!compact && <Table.Th>Created</Table.Th>}
                {!compact && <Table.Th>Finished</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.data.data.map((row) => (
                <Table.Tr key={row.id} style={{ cursor: 'pointer' }} onClick={() => open(row.id)}>
                  <Table.Td style={{ overflowWrap: 'anywhere' }}>
                    <Anchor component={Link} to={`/verifications/${kind}/${row.id}`} onClick={(e: React.MouseEvent) => e.stopPropagation()} ff="monospace" size="sm">
                      {row.reference}
                    </Anchor>
                    {compact && <Text size="sm">{row.subject}</Text>}
                  </Table.Td>
                  {!compact && <Table.Td>{row.subject || '—'}</Table.Td>}
                  <Table.Td>
                    <StatusPill status={row.status} />
                    {compact && (
                      <Text size="xs" c="dimmed">
                        {formatDateTime(row.completedAt ?? row.createdAt)}
                      </Text>
                    )}
                  </Table.Td>
                  {!compact && <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatDateTime(row.createdAt)}</Table.Td>}
                  {!compact && <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatDateTime(row.completedAt)}</Table.Td>}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <Pager offset={offset} limit={LIMIT} total={list.data.total} capped={list.data.totalCapped} shown={list.data.data.length} onChange={setOffset} />
          {list.data.totalCapped && (
            <Text size="sm" c="dimmed">
              More than {list.data.total.toLocaleString('en-NG')} match: narrow the search to reach older ones, or clear the filters to page through all.
            </Text>
          )}
        </>
      )}
    </Stack>
  );
}
