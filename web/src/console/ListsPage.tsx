import { Badge, Card, Group, SegmentedControl, Stack, Text, Title } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { api, unwrap } from '../api/client';
import type { operations } from '../api/schema';
import { formatDateTime } from '../components/format';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { DataTable } from '../components/table';

type Source = operations['consoleListScreeningSources']['responses'][200]['content']['application/json']['data'][number];
type Volume = operations['consoleScreeningVolumes']['responses'][200]['content']['application/json']['data'][number];

const OUTCOMES: Record<string, { label: string; colour: string }> = {
  updated: { label: 'Updated', colour: 'teal' },
  unchanged: { label: 'Unchanged', colour: 'teal' },
  not_modified: { label: 'Not modified', colour: 'teal' },
  failed: { label: 'Failed', colour: 'red' },
};

/** The watchlists Vouch screens against, how fresh each is, and how much each organization screens. */
export function ListsPage() {
  return (
    <Stack gap="lg">
      <div>
        <Title order={2}>Watchlists</Title>
        <Text size="sm" c="dimmed">
          The sanctions, PEP and internal lists screenings run against (vouch lists), each source's serving version and freshness, and screening volumes per organization.
        </Text>
      </div>
      <SourcesSection />
      <VolumesSection />
    </Stack>
  );
}

function Section({ id, title, description, action, children }: { id: string; title: string; description: string; action?: ReactNode; children: ReactNode }) {
  return (
    <Card withBorder component="section" aria-labelledby={id}>
      <Stack gap="sm">
        <Group justify="space-between" wrap="wrap" gap="xs">
          <div>
            <Title order={3} size="h4" id={id}>
              {title}
            </Title>
            <Text size="sm" c="dimmed">
              {description}
            </Text>
          </div>
          {action}
        </Group>
        {children}
      </Stack>
    </Card>
  );
}

function NextSync({ source }: { source: Source }) {
  if (!source.enabled) return <Text span size="sm" c="dimmed">Disabled</Text>;
  if (!source.nextSyncAt) return <Text span size="sm" c="dimmed">Import only</Text>;
  const due = new Date(source.nextSyncAt).getTime() <= Date.now();
  return (
    <span>
      {due ? 'Due now' : formatDateTime(source.nextSyncAt)}
      {source.every && (
        <Text span size="xs" c="dimmed">
          {' '}
          (every {source.every})
        </Text>
      )}
    </span>
  );
}

/** The last sync's outcome under the source's name; nothing before the first sync. */
function SyncOutcome({ outcome }: { outcome: string | null }) {
  if (!outcome) return null;
  const known = OUTCOMES[outcome] ?? { label: outcome, colour: 'gray' };
  return (
    <Badge variant="light" color={known.colour} size="sm" mt={4} title="The last sync">
      {known.label}
    </Badge>
  );
}

function SourcesSection() {
  const sources = useQuery({ queryKey: ['console', 'screening', 'lists'], queryFn: () => unwrap(api.GET('/api/console/screening/lists')), refetchInterval: 60_000 });
  return (
    <Section id="sources-title" title="Sources" description="A source that fails keeps serving its last good version; its error stays here until a sync succeeds.">
      {sources.isPending ? (
        <LoadingState label="Loading the lists…" />
      ) : sources.isError ? (
        <ErrorAlert error={sources.error} onRetry={() => void sources.refetch()} />
      ) : sources.data.data.length === 0 ? (
        <EmptyState title="No lists loaded">
          Live screenings have nothing to screen against. Add the official sources with vouch lists add (docs/screening-lists.md) or import a file with vouch lists import FILE --source NAME --format FORMAT.
        </EmptyState>
      ) : (
        <DataTable
          caption="Watchlist sources"
          rows={sources.data.data}
          rowKey={(row) => row.name}
          minWidth={940}
          columns={[
            {
              key: 'name',
              header: 'Source',
              cell: (row) => (
                <div>
                  <Text size="sm" fw={600}>
                    {row.name}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {row.format}
                  </Text>
                  <SyncOutcome outcome={row.lastOutcome} />
                </div>
              ),
            },
            {
              key: 'url',
              header: 'URL',
              cell: (row) =>
                row.url ? (
                  <Text size="xs" style={{ overflowWrap: 'anywhere' }} maw={240}>
                    {row.url}
                  </Text>
                ) : (
                  <Text span size="sm" c="dimmed">
                    None
                  </Text>
                ),
            },
            { key: 'version', header: 'Version', align: 'right', cell: (row) => (row.version === 0 ? '—' : row.version) },
            { key: 'entities', header: 'Entities', align: 'right', cell: (row) => row.entities.toLocaleString('en-NG') },
            { key: 'loaded', header: 'Loaded', cell: (row) => formatDateTime(row.loadedAt) },
            { key: 'success', header: 'Last success', cell: (row) => formatDateTime(row.lastSuccessAt) },
            {
              key: 'failure',
              header: 'Last failure',
              cell: (row) =>
                row.lastFailureAt ? (
                  <div>
                    <Text size="sm" c="red.8">
                      {formatDateTime(row.lastFailureAt)}
                    </Text>
                    {row.lastError && (
                      <Text size="xs" style={{ overflowWrap: 'anywhere' }} maw={260}>
                        {row.lastError}
                      </Text>
                    )}
                  </div>
                ) : (
                  '—'
                ),
            },
            { key: 'next', header: 'Next sync', cell: (row) => <NextSync source={row} /> },
          ]}
        />
      )}
    </Section>
  );
}

function VolumesSection() {
  const [mode, setMode] = useState<'live' | 'test'>('live');
  const volumes = useQuery({
    queryKey: ['console', 'screening', 'volumes', mode],
    queryFn: () => unwrap(api.GET('/api/console/screening/volumes', { params: { query: { mode } } })),
    placeholderData: keepPreviousData,
  });
  return (
    <Section
      id="volumes-title"
      title="Screening volumes"
      description="Per organization that screens: screenings of the last 30 days, hits waiting for its review, confirmed matches, and subjects it monitors. Longest review queue first."
      action={
        <SegmentedControl
          aria-label="Mode of the volumes"
          size="xs"
          value={mode}
          onChange={(value) => setMode(value === 'test' ? 'test' : 'live')}
          data={[
            { value: 'live', label: 'Live' },
            { value: 'test', label: 'Test' },
          ]}
        />
      }
    >
      {volumes.isPending ? (
        <LoadingState label="Loading the volumes…" />
      ) : volumes.isError ? (
        <ErrorAlert error={volumes.error} onRetry={() => void volumes.refetch()} />
      ) : volumes.data.data.length === 0 ? (
        <EmptyState title={`No ${mode} screenings yet`}>No organization has screened anyone in {mode} mode.</EmptyState>
      ) : (
        <DataTable<Volume>
          caption={`Screening volumes, ${mode} mode`}
          rows={volumes.data.data}
          rowKey={(row) => row.orgId}
          minWidth={640}
          columns={[
            { key: 'org', header: 'Organization', cell: (row) => row.orgName },
            { key: 'recent', header: 'Screenings, 30 days', align: 'right', cell: (row) => row.screenings30d.toLocaleString('en-NG') },
            {
              key: 'pending',
              header: 'Hits pending review',
              align: 'right',
              cell: (row) => (row.pendingHits > 0 ? <Text span c="orange.8" fw={600}>{row.pendingHits.toLocaleString('en-NG')}</Text> : 0),
            },
            { key: 'confirmed', header: 'Confirmed matches', align: 'right', cell: (row) => row.confirmedMatches.toLocaleString('en-NG') },
            { key: 'monitored', header: 'Monitored subjects', align: 'right', cell: (row) => row.monitored.toLocaleString('en-NG') },
          ]}
        />
      )}
    </Section>
  );
}
