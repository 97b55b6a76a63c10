import { Anchor, Badge, Button, Group, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import type { operations } from '../api/schema';
import { formatDateTime } from '../components/format';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { DataTable } from '../components/table';
import { DayInput } from '../components/DayInput';

type AuditEvent = operations['consoleListAuditEvents']['responses'][200]['content']['application/json']['data'][number];
type ActorKind = AuditEvent['actor']['kind'];
const PAGE = 50;

const ACTOR_KINDS: { value: ActorKind; label: string }[] = [
  { value: 'operator', label: 'Operators (console)' },
  { value: 'member', label: 'Customers (portal)' },
  { value: 'cli', label: 'Command line' },
  { value: 'system', label: 'The system' },
];

/** Who acted: a person by name and email, or the command line. */
function Actor({ actor }: { actor: AuditEvent['actor'] }) {
  if (actor.kind === 'cli') return <Text size="sm">Command line</Text>;
  if (actor.kind === 'system') return <Text size="sm">Vouch (automatic)</Text>;
  return (
    <div>
      <Text size="sm">
        {actor.name ?? 'A deleted person'}{' '}
        {actor.kind === 'operator' && (
          <Badge size="xs" variant="light" color="grape">
            operator
          </Badge>
        )}
      </Text>
      {actor.email && (
        <Text size="xs" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
          {actor.email}
        </Text>
      )}
    </div>
  );
}

function show(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

function fields(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** Before → after, field by field: changed fields as "old → new", new ones as they are, unchanged ones left out. */
function Change({ before, after }: { before: unknown; after: unknown }) {
  const b = fields(before);
  const a = fields(after);
  if ((before !== null && !b) || (after !== null && !a)) return <Text size="sm">{`${show(before)} → ${show(after)}`}</Text>;
  const keys = [...new Set([...Object.keys(b ?? {}), ...Object.keys(a ?? {})])];
  const lines = keys.flatMap((key) => {
    const had = b && key in b;
    const has = a && key in a;
    if (had && has && JSON.stringify(b[key]) === JSON.stringify(a[key])) return [];
    if (had && has) return [{ key, text: `${show(b[key])} → ${show(a[key])}` }];
    if (has) return [{ key, text: show(a![key]) }];
    return [{ key, text: `${show(b![key])} → (none)` }];
  });
  if (lines.length === 0) return <Text size="sm" c="dimmed">—</Text>;
  return (
    <Stack gap={2}>
      {lines.map((line) => (
        <Text key={line.key} size="sm" style={{ overflowWrap: 'anywhere' }}>
          <Text span size="sm" c="dimmed">
            {line.key}:
          </Text>{' '}
          {line.text}
        </Text>
      ))}
    </Stack>
  );
}

/** Picks an organization by searching its name (the console's organization list). */
export function OrganizationFilter({ value, onChange }: { value: { id: string; name: string } | null; onChange(value: { id: string; name: string } | null): void }) {
  const [search, setSearch] = useState('');
  const [q] = useDebouncedValue(search.trim(), 250);
  const organizations = useQuery({
    queryKey: ['console', 'organizations', 'pick', q],
    queryFn: () => unwrap(api.GET('/api/console/organizations', { params: { query: { ...(q ? { q } : {}), limit: 20 } } })),
    placeholderData: keepPreviousData,
  });
  const options = (organizations.data?.data ?? []).map((org) => ({ value: org.id, label: org.name }));
  if (value && !options.some((option) => option.value === value.id)) options.unshift({ value: value.id, label: value.name });
  return (
    <Select
      label="Organization"
      placeholder="Any organization"
      searchable
      clearable
      data={options}
      value={value?.id ?? null}
      searchValue={search}
      onSearchChange={setSearch}
      filter={({ options: all }) => all}
      nothingFoundMessage={organizations.isFetching ? 'Searching…' : 'No organization matches'}
      onChange={(id, option) => onChange(id && option ? { id, name: option.label } : null)}
      w={240}
    />
  );
}

/** Every operator and customer action, newest first: filter, read before → after, download as CSV. */
export function AuditLogPage() {
  const [org, setOrg] = useState<{ id: string; name: string } | null>(null);
  const [actorText, setActorText] = useState('');
  const [actorKind, setActorKind] = useState<ActorKind | null>(null);
  const [action, setAction] = useState<string | null>(null);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [targetText, setTargetText] = useState('');
  const [offset, setOffset] = useState(0);
  const [actor] = useDebouncedValue(actorText.trim(), 300);
  const [q] = useDebouncedValue(targetText.trim(), 300);
  const filters = {
    ...(org ? { orgId: org.id } : {}),
    ...(actor ? { actor } : {}),
    ...(actorKind ? { actorKind } : {}),
    ...(action ? { action } : {}),
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    ...(q ? { q } : {}),
  };
  const rangeError = from && to && from > to ? 'The first day must not be after the last' : undefined;
  const actions = useQuery({ queryKey: ['console', 'audit', 'actions'], queryFn: () => unwrap(api.GET('/api/console/audit/actions')) });
  const log = useQuery({
    queryKey: ['console', 'audit', filters, offset],
    queryFn: () => unwrap(api.GET('/api/console/audit', { params: { query: { ...filters, limit: PAGE, offset } } })),
    placeholderData: keepPreviousData,
    enabled: !rangeError,
  });
  const csv = `/api/console/audit.csv${Object.keys(filters).length ? `?${new URLSearchParams(filters).toString()}` : ''}`;
  const filtered = Object.keys(filters).length > 0;
  const change = <T,>(set: (value: T) => void) => (value: T) => {
    set(value);
    setOffset(0);
  };
  const families = [...new Set((actions.data?.data ?? []).map((name) => name.split('.')[0]!))];
  return (
    <Stack gap="md">
      <Group justify="space-between" wrap="wrap" gap="xs">
        <div>
          <Title order={2}>Audit log</Title>
          <Text size="sm" c="dimmed">
            Every action of operators and customers on accounts, access, money, team and webhooks: who, when, what, and the change.
          </Text>
        </div>
        <Button component="a" href={csv} download variant="default">
          Download CSV
        </Button>
      </Group>
      <Group align="flex-end" gap="sm" wrap="wrap" role="search" aria-label="Filter the audit log">
        <OrganizationFilter value={org} onChange={change(setOrg)} />
        <TextInput label="Who" placeholder="Email or name" value={actorText} onChange={(event) => change(setActorText)(event.currentTarget.value)} w={200} />
        <Select label="Acting as" placeholder="Anyone" clearable data={ACTOR_KINDS} value={actorKind} onChange={(value) => change(setActorKind)(value as ActorKind | null)} w={190} />
        <Select
          label="Action"
          placeholder="Any action"
          searchable
          clearable
          data={[
            { group: 'Families', items: families.map((family) => ({ value: `${family}.`, label: `${family}.* (all)` })) },
            { group: 'Actions', items: actions.data?.data ?? [] },
          ]}
          value={action}
          onChange={change(setAction)}
          w={230}
        />
        <DayInput label="From" value={from} max={to || undefined} onChange={(day) => change(setFrom)(day)} w={150} />
        <DayInput label="To" value={to} min={from || undefined} onChange={(day) => change(setTo)(day)} w={150} error={rangeError} />
        <TextInput label="Target contains" placeholder="Reference, email, webhook id" value={targetText} onChange={(event) => change(setTargetText)(event.currentTarget.value)} w={220} />
        {filtered && (
          <Button
            variant="subtle"
            onClick={() => {
              setOrg(null);
              setActorText('');
              setActorKind(null);
              setAction(null);
              setFrom('');
              setTo('');
              setTargetText('');
              setOffset(0);
            }}
          >
            Clear filters
          </Button>
        )}
      </Group>
      {rangeError ? null : log.isPending ? (
        <LoadingState label="Loading the audit log…" />
      ) : log.isError ? (
        <ErrorAlert error={log.error} onRetry={() => void log.refetch()} />
      ) : log.data.data.length === 0 ? (
        filtered ? (
          <EmptyState title="No actions match">Change or clear the filters above.</EmptyState>
        ) : (
          <EmptyState title="Nothing in the audit log yet">Actions of operators and customers appear here as they happen.</EmptyState>
        )
      ) : (
        <>
          {log.data.totalCapped && (
            <Text size="sm" c="dimmed">
              More than {log.data.total.toLocaleString('en-GB')} actions match: narrow the filters to page further, or download them all as CSV.
            </Text>
          )}
          <DataTable
            caption="Audit log"
            rows={log.data.data}
            rowKey={(row) => String(row.id)}
            page={{ offset, limit: PAGE, total: log.data.total, onChange: setOffset }}
            minWidth={960}
            columns={[
              { key: 'when', header: 'When', cell: (row) => <Text size="sm" style={{ whiteSpace: 'nowrap' }}>{formatDateTime(row.createdAt)}</Text> },
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
              { key: 'who', header: 'Who', cell: (row) => <Actor actor={row.actor} /> },
              { key: 'action', header: 'Action', cell: (row) => <Text size="sm" ff="monospace">{row.action}</Text> },
              {
                key: 'target',
                header: 'Target',
                cell: (row) => (
                  <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                    {row.targetPerson ? `${row.targetPerson.name} (${row.targetPerson.email})` : (row.target ?? '—')}
                  </Text>
                ),
              },
              { key: 'change', header: 'Before → after', cell: (row) => <Change before={row.before} after={row.after} /> },
            ]}
          />
        </>
      )}
    </Stack>
  );
}
