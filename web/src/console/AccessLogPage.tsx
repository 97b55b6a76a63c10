import { Anchor, Badge, Button, Group, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import type { operations } from '../api/schema';
import { formatDateTime } from '../components/format';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { DataTable } from '../components/table';
import { OrganizationFilter } from './AuditLogPage';
import { DayInput } from '../components/DayInput';

type Entry = operations['consoleListPersonalDataAccess']['responses'][200]['content']['application/json']['data'][number];
type ActorKind = Entry['actor']['kind'];
type Channel = Entry['channel'];
const PAGE = 50;

const ACTOR_KINDS: Record<ActorKind, string> = {
  api: 'API secret',
  member: 'Customer',
  operator: 'Operator',
  agent: 'Field agent',
  cli: 'Command line',
};

const CHANNELS: Record<Channel, string> = {
  api: 'API',
  portal: 'Portal',
  console: 'Console',
  field: 'Field app',
  cli: 'Command line',
};

/** The kinds of record the server logs (src/access-log/service.ts, ACCESS_RESOURCES). */
const RESOURCES: { value: string; label: string }[] = [
  { value: 'address', label: 'Address verification' },
  { value: 'business', label: 'Business verification' },
  { value: 'guarantor', label: 'Guarantor verification' },
  { value: 'employment', label: 'Employment verification' },
  { value: 'ledger', label: 'Ledger (export)' },
  { value: 'agent_task', label: 'Field task' },
  { value: 'subject', label: 'Subject request' },
];

const ACTIONS: Record<Entry['action'], string> = { view: 'Viewed', list: 'Listed', export: 'Exported' };

/** A date input's day (local time) as the first or last instant of that day. */
function dayBound(day: string, end: boolean): string {
  return new Date(`${day}T${end ? '23:59:59.999' : '00:00:00'}`).toISOString();
}

function Who({ actor }: { actor: Entry['actor'] }) {
  const kind = ACTOR_KINDS[actor.kind];
  return (
    <div>
      <Text size="sm">
        <Badge size="xs" variant="light" color={actor.kind === 'operator' ? 'grape' : actor.kind === 'api' ? 'blue' : 'gray'} mr={6}>
          {kind}
        </Badge>
        {actor.name ?? (actor.kind === 'member' || actor.kind === 'operator' ? 'A deleted person' : '')}
      </Text>
      {actor.id && (
        <Text size="xs" c="dimmed" ff="monospace" style={{ overflowWrap: 'anywhere' }}>
          {actor.id}
        </Text>
      )}
    </div>
  );
}

/** Who viewed, listed or exported personal data: API secrets, customers, operators, field agents, the command line. */
export function AccessLogPage() {
  const [org, setOrg] = useState<{ id: string; name: string } | null>(null);
  const [resource, setResource] = useState<string | null>(null);
  const [channel, setChannel] = useState<Channel | null>(null);
  const [actorKind, setActorKind] = useState<ActorKind | null>(null);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [offset, setOffset] = useState(0);
  const rangeError = from && to && from > to ? 'The first day must not be after the last' : undefined;
  const filters = {
    ...(org ? { orgId: org.id } : {}),
    ...(resource ? { resource } : {}),
    ...(channel ? { channel } : {}),
    ...(actorKind ? { actorKind } : {}),
    ...(from ? { from: dayBound(from, false) } : {}),
    ...(to ? { to: dayBound(to, true) } : {}),
  };
  const filtered = Object.keys(filters).length > 0;
  const log = useQuery({
    queryKey: ['console', 'access-log', filters, offset],
    queryFn: () => unwrap(api.GET('/api/console/personal-data-access', { params: { query: { ...filters, limit: PAGE, offset } } })),
    placeholderData: keepPreviousData,
    enabled: !rangeError,
  });
  const change = <T,>(set: (value: T) => void) => (value: T) => {
    set(value);
    setOffset(0);
  };
  return (
    <Stack gap="md">
      <div>
        <Title order={2}>Access log</Title>
        <Text size="sm" c="dimmed">
          Who viewed, listed or exported verifications' personal data, when, how and from where. The log names records by kind and id only; it holds no personal data.
        </Text>
      </div>
      <Group align="flex-end" gap="sm" wrap="wrap" role="search" aria-label="Filter the access log">
        <OrganizationFilter value={org} onChange={change(setOrg)} />
        <Select label="Record" placeholder="Any record" clearable data={RESOURCES} value={resource} onChange={change(setResource)} w={210} />
        <Select
          label="Channel"
          placeholder="Any channel"
          clearable
          data={Object.entries(CHANNELS).map(([value, label]) => ({ value, label }))}
          value={channel}
          onChange={(value) => change(setChannel)(value as Channel | null)}
          w={160}
        />
        <Select
          label="Who"
          placeholder="Anyone"
          clearable
          data={Object.entries(ACTOR_KINDS).map(([value, label]) => ({ value, label }))}
          value={actorKind}
          onChange={(value) => change(setActorKind)(value as ActorKind | null)}
          w={160}
        />
        <DayInput label="From" value={from} max={to || undefined} onChange={(day) => change(setFrom)(day)} w={150} />
        <DayInput label="To" value={to} min={from || undefined} onChange={(day) => change(setTo)(day)} w={150} error={rangeError} />
        {filtered && (
          <Button
            variant="subtle"
            onClick={() => {
              setOrg(null);
              setResource(null);
              setChannel(null);
              setActorKind(null);
              setFrom('');
              setTo('');
              setOffset(0);
            }}
          >
            Clear filters
          </Button>
        )}
      </Group>
      {rangeError ? null : log.isPending ? (
        <LoadingState label="Loading the access log…" />
      ) : log.isError ? (
        <ErrorAlert error={log.error} onRetry={() => void log.refetch()} />
      ) : log.data.data.length === 0 ? (
        filtered ? (
          <EmptyState title="No access matches">Change or clear the filters above.</EmptyState>
        ) : (
          <EmptyState title="Nothing in the access log yet">Views and exports of verifications appear here as API secrets, customers, operators and field agents read them.</EmptyState>
        )
      ) : (
        <DataTable
          caption="Access log"
          rows={log.data.data}
          rowKey={(row) => `${row.id}.${row.position}`}
          page={{ offset, limit: PAGE, total: log.data.total, onChange: setOffset }}
          minWidth={960}
          columns={[
            { key: 'when', header: 'When', cell: (row) => <Text size="sm" style={{ whiteSpace: 'nowrap' }}>{formatDateTime(row.at)}</Text> },
            { key: 'who', header: 'Who', cell: (row) => <Who actor={row.actor} /> },
            { key: 'channel', header: 'Channel', cell: (row) => <Text size="sm">{CHANNELS[row.channel]}</Text> },
            { key: 'action', header: 'Action', cell: (row) => <Text size="sm">{ACTIONS[row.action]}</Text> },
            {
              key: 'resource',
              header: 'Record',
              cell: (row) => (
                <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                  {row.resource}
                  {row.resourceId ? ` #${row.resourceId}` : ' (many)'}
                  {row.mode ? (
                    <Text span size="xs" c="dimmed">
                      {' '}
                      · {row.mode}
                    </Text>
                  ) : null}
                </Text>
              ),
            },
            {
              key: 'org',
              header: 'Organization',
              cell: (row) =>
                row.orgId && row.orgName ? (
                  <Anchor component="button" type="button" size="sm" onClick={() => change(setOrg)({ id: row.orgId!, name: row.orgName! })} title={`Show only ${row.orgName}`}>
                    {row.orgName}
                  </Anchor>
                ) : (
                  <Text size="sm" c="dimmed">
                    —
                  </Text>
                ),
            },
            { key: 'ip', header: 'IP address', cell: (row) => <Text size="sm" ff="monospace">{row.ip ?? '—'}</Text> },
          ]}
        />
      )}
    </Stack>
  );
}
