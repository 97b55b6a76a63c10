import { Anchor, Badge, Card, Group, SegmentedControl, Select, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { api, unwrap } from '../api/client';
import type { operations } from '../api/schema';
import { formatDateTime } from '../components/format';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { OrganizationFilter } from './AuditLogPage';
import { SideScroll } from '../components/SideScroll';

type Summary = operations['consoleSessionSummary']['responses'][200]['content']['application/json'];
type ReasonCount = Summary['reasons'][number];
type Window = '24h' | '7d' | '30d';

const WINDOWS: { value: Window; label: string }[] = [
  { value: '24h', label: '24 hours' },
  { value: '7d', label: '7 days' },
  { value: '30d', label: '30 days' },
];

const percent = (rate: number | null) => (rate === null ? '—' : `${Math.round(rate * 1000) / 10}%`);

/** "+12" / "−3" / "new" against the window before: what a spike looks like. */
function Change({ now, before }: { now: number; before: number }) {
  if (now === before) return <Text span size="xs" c="dimmed">same as before</Text>;
  if (before === 0) return <Badge color="orange" variant="light" size="sm">new</Badge>;
  const ratio = now / before;
  const colour = ratio >= 2 ? 'red' : now > before ? 'orange' : 'teal';
  return (
    <Badge color={colour} variant="light" size="sm">
      {now > before ? '+' : '−'}
      {Math.abs(now - before)} ({before} before)
    </Badge>
  );
}

function ReasonTable({ reasons, caption }: { reasons: ReasonCount[]; caption: string }) {
  return (
    <SideScroll minWidth={420}>
      <Table aria-label={caption} verticalSpacing={4} striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Reason</Table.Th>
            <Table.Th ta="right">Sessions</Table.Th>
            <Table.Th ta="right">Liveness attempts</Table.Th>
            <Table.Th>Against the window before</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {reasons.map((reason) => (
            <Table.Tr key={reason.code}>
              <Table.Td>
                <Text size="sm">{reason.text}</Text>
                <Text size="xs" c="dimmed" ff="monospace">
                  {reason.code}
                </Text>
              </Table.Td>
              <Table.Td ta="right">{reason.sessions}</Table.Td>
              <Table.Td ta="right">{reason.attempts}</Table.Td>
              <Table.Td>
                <Change now={reason.sessions + reason.attempts} before={reason.previousSessions + reason.previousAttempts} />
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </SideScroll>
  );
}

function Stat({ label, value, hint }: { label: string; value: string; hint?: string }) {
  return (
    <Card withBorder padding="sm">
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text fw={700} size="xl">
        {value}
      </Text>
      {hint && (
        <Text size="xs" c="dimmed">
          {hint}
        </Text>
      )}
    </Card>
  );
}

/**
 * Verification sessions in aggregate: outcomes, pass rate and failure reasons over a window, for
 * one organization or all, against the window before, and per organization, so an operator spots
 * an attack (a burst of replayed frames or swapped faces at one customer). No personal data.
 */
export function SessionsPage() {
  const [window, setWindow] = useState<Window>('24h');
  const [org, setOrg] = useState<{ id: string; name: string } | null>(null);
  const [mode, setMode] = useState<'test' | 'live' | null>('live');
  const query = { window, ...(org ? { orgId: org.id } : {}), ...(mode ? { mode } : {}) };
  const summary = useQuery({
    queryKey: ['console', 'sessions', query],
    queryFn: () => unwrap(api.GET('/api/console/sessions/summary', { params: { query } })),
    placeholderData: keepPreviousData,
  });
  return (
    <Stack gap="lg">
      <div>
        <Title order={2}>Sessions</Title>
        <Text c="dimmed" size="sm">
          How verification sessions ended, and why they failed, against the window before. A reason that jumps at one organization (replayed frames, a face swapped in, photos held up) is what an attack looks like.
        </Text>
      </div>
      <Group align="flex-end" wrap="wrap" gap="sm">
        <Stack gap={4}>
          <Text size="sm" fw={500} id="window-label">
            Window
          </Text>
          <SegmentedControl aria-labelledby="window-label" value={window} onChange={(value) => setWindow(value as Window)} data={WINDOWS} />
        </Stack>
        <OrganizationFilter value={org} onChange={setOrg} />
        <Select
          label="Mode"
          data={[
            { value: 'live', label: 'Live' },
            { value: 'test', label: 'Test' },
          ]}
          placeholder="Both modes"
          clearable
          value={mode}
          onChange={(value) => setMode(value as 'test' | 'live' | null)}
          w={140}
        />
      </Group>
      {summary.isPending ? (
        <LoadingState label="Counting sessions…" />
      ) : summary.isError ? (
        <ErrorAlert error={summary.error} onRetry={() => void summary.refetch()} />
      ) : summary.data.totals.sessions === 0 && summary.data.totals.attemptsDecided === 0 && summary.data.reasons.length === 0 ? (
        <EmptyState title="No sessions in this window">
          No {mode ?? ''} session was created {org ? `by ${org.name} ` : ''}in the last {WINDOWS.find((w) => w.value === window)?.label}. Pick a longer window{mode ? ' or the other mode' : ''}.
        </EmptyState>
      ) : (
        <SummaryView summary={summary.data} />
      )}
    </Stack>
  );
}

function SummaryView({ summary: s }: { summary: Summary }) {
  const t = s.totals;
  return (
    <Stack gap="lg">
      <Text size="xs" c="dimmed">
        Sessions created from {formatDateTime(s.from)} to {formatDateTime(s.to)}; the window before started {formatDateTime(s.previousFrom)}.
      </Text>
      <SimpleGrid cols={{ base: 2, sm: 3, md: 6 }} spacing="sm">
        <Stat label="Sessions" value={String(t.sessions)} hint={`${t.previousSessions} the window before`} />
        <Stat label="Pass rate" value={percent(t.passRate)} hint={`${percent(t.previousPassRate)} the window before`} />
        <Stat label="Verified" value={String(t.verified)} />
        <Stat label="Failed" value={String(t.failed)} />
        <Stat label="Expired" value={String(t.expired)} />
        <Stat label="Cancelled" value={String(t.cancelled)} />
        <Stat label="In progress" value={String(t.inProgress)} />
        <Stat label="Liveness attempts failed" value={`${t.attemptsFailed} of ${t.attemptsDecided}`} />
      </SimpleGrid>
      <Card withBorder component="section" aria-labelledby="reasons-title">
        <Title order={3} size="h4" id="reasons-title" mb="sm">
          Failure reasons
        </Title>
        {s.reasons.length === 0 ? (
          <Text size="sm" c="dimmed">
            No failures in this window or the one before.
          </Text>
        ) : (
          <ReasonTable reasons={s.reasons} caption="Failure reasons, most frequent first" />
        )}
      </Card>
      <Stack gap="sm" component="section" aria-labelledby="orgs-title">
        <Title order={3} size="h4" id="orgs-title">
          Per organization
        </Title>
        {s.organizations.map((org) => (
          <Card withBorder key={org.orgId} component="article" aria-label={org.orgName}>
            <Group justify="space-between" wrap="wrap" mb="xs">
              <Anchor component={Link} to={`/console/organizations/${org.orgId}`} fw={600}>
                {org.orgName}
              </Anchor>
              <Text size="sm">
                Pass rate {percent(org.passRate)}{' '}
                <Text span size="xs" c="dimmed">
                  ({percent(org.previousPassRate)} before)
                </Text>
              </Text>
            </Group>
            <Text size="sm" c="dimmed" mb="xs">
              {org.sessions} sessions: {org.verified} verified, {org.failed} failed, {org.expired} expired, {org.cancelled} cancelled, {org.inProgress} in progress · {org.attemptsFailed} of {org.attemptsDecided} liveness attempts failed
            </Text>
            {org.reasons.length > 0 && <ReasonTable reasons={org.reasons} caption={`Failure reasons at ${org.orgName}`} />}
          </Card>
        ))}
      </Stack>
    </Stack>
  );
}
