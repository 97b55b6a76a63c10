import { Anchor, Badge, Button, Card, Group, SimpleGrid, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useState, type ReactNode } from 'react';
import { api, unwrap } from '../api/client';
import { formatDateTime, StatusBadge } from '../components/format';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { DataTable } from '../components/table';
import { AccountBadge, AssignModal, CoverageModal, coverageText, DeactivateModal, InviteModal, type FieldTask } from './agents-shared';

/** One agent: coverage and account, their open visits (reassign one), and the visits they completed. */
export function AgentPage() {
  const { agentId = '' } = useParams({ strict: false }) as { agentId?: string };
  const [action, setAction] = useState<'coverage' | 'invite' | 'deactivate' | undefined>();
  const [reassigning, setReassigning] = useState<FieldTask | undefined>();
  const detail = useQuery({
    queryKey: ['console', 'agent', agentId],
    queryFn: () => unwrap(api.GET('/api/console/agents/{agentId}', { params: { path: { agentId } } })),
  });
  const back = (
    <Anchor component={Link} to="/console/agents" size="sm">
      ← Field agents
    </Anchor>
  );
  if (detail.isPending) return <LoadingState label="Loading the agent…" />;
  if (detail.isError) {
    return (
      <Stack gap="md">
        {back}
        <ErrorAlert error={detail.error} onRetry={() => void detail.refetch()} title="This agent could not be loaded" />
      </Stack>
    );
  }
  const { agent, openTasks, completedVisits } = detail.data;
  return (
    <Stack gap="md">
      {back}
      <Group justify="space-between" wrap="wrap">
        <Group gap="sm">
          <Title order={2}>{agent.name}</Title>
          {agent.active ? <Badge color="green" variant="light">Active</Badge> : <Badge color="gray">Deactivated</Badge>}
        </Group>
        {agent.active && (
          <Group gap="xs">
            <Button variant="light" size="sm" onClick={() => setAction('coverage')}>
              Edit coverage
            </Button>
            <Button variant="light" size="sm" onClick={() => setAction('invite')}>
              New sign-in link
            </Button>
            <Button variant="light" color="red" size="sm" onClick={() => setAction('deactivate')}>
              Deactivate
            </Button>
          </Group>
        )}
      </Group>
      <SimpleGrid cols={{ base: 1, sm: 2, md: 4 }}>
        <Fact label="Contact">
          {agent.email}
          <br />
          {agent.phone}
        </Fact>
        <Fact label="Covers">{coverageText(agent)}</Fact>
        <Fact label="Field app">
          <AccountBadge agent={agent} />
        </Fact>
        <Fact label="Visits">
          {agent.openTasks} open · {agent.completedVisits} completed
        </Fact>
      </SimpleGrid>

      <Title order={3} size="h4">
        Open visits
      </Title>
      {openTasks.length === 0 ? (
        <Text size="sm" c="dimmed">
          No open visits. New ones in {coverageText(agent) || 'their states'} are assigned as they come.
        </Text>
      ) : (
        <DataTable
          caption="Open visits"
          rows={openTasks}
          rowKey={(row) => `${row.kind}:${row.id}`}
          minWidth={860}
          columns={[
            { key: 'ref', header: 'Visit', cell: (row) => <VisitName kind={row.kind} reference={row.reference} business={row.business?.name} /> },
            { key: 'org', header: 'Organization', cell: (row) => row.orgName },
            { key: 'place', header: 'Place', cell: (row) => `${row.place.street}, ${row.place.lga}, ${row.place.state}` },
            { key: 'assigned', header: 'Assigned', cell: (row) => formatDateTime(row.assignedAt) },
            { key: 'due', header: 'Due', cell: (row) => <Due at={row.dueAt} /> },
            {
              key: 'state',
              header: 'State',
              cell: (row) =>
                row.inReview ? (
                  <Badge color="orange" variant="light">In review</Badge>
                ) : row.reviewNote ? (
                  <Badge color="yellow" variant="light" title={row.reviewNote}>Sent back</Badge>
                ) : row.visitStartedAt ? (
                  <Badge color="blue" variant="light">Visiting</Badge>
                ) : (
                  <Badge color="gray" variant="light">To visit</Badge>
                ),
            },
            {
              key: 'action',
              header: 'Action',
              cell: (row) =>
                row.inReview ? (
                  <Anchor component={Link} to="/console/reviews" size="sm">
                    Review
                  </Anchor>
                ) : (
                  <Button size="xs" variant="light" onClick={() => setReassigning(row)} aria-label={`Reassign ${row.reference}`}>
                    Reassign
                  </Button>
                ),
            },
          ]}
        />
      )}

      <Title order={3} size="h4">
        Completed visits
      </Title>
      {completedVisits.length === 0 ? (
        <EmptyState title="No completed visits yet">Visits {agent.name} reports (and any an operator approved) are listed here, newest first.</EmptyState>
      ) : (
        <DataTable
          caption="Completed visits"
          rows={completedVisits}
          rowKey={(row) => `${row.kind}:${row.id}`}
          minWidth={860}
          columns={[
            { key: 'ref', header: 'Visit', cell: (row) => <VisitName kind={row.kind} reference={row.reference} /> },
            { key: 'org', header: 'Organization', cell: (row) => row.orgName },
            { key: 'place', header: 'Place', cell: (row) => `${row.place.street}, ${row.place.lga}, ${row.place.state}` },
            { key: 'created', header: 'Requested', cell: (row) => formatDateTime(row.createdAt) },
            { key: 'done', header: 'Completed', cell: (row) => formatDateTime(row.completedAt) },
            { key: 'outcome', header: 'Outcome', cell: (row) => <StatusBadge status={row.outcome === 'verified' ? 'verified' : 'not verified'} /> },
            {
              key: 'flag',
              header: 'Flagged',
              cell: (row) =>
                row.flaggedForReview ? (
                  <Badge color="orange" variant="light" title={row.reviewReason}>
                    Flagged
                  </Badge>
                ) : (
                  '—'
                ),
            },
          ]}
        />
      )}
      {action === 'coverage' && <CoverageModal agent={agent} onClose={() => setAction(undefined)} />}
      {action === 'invite' && <InviteModal agent={agent} onClose={() => setAction(undefined)} />}
      {action === 'deactivate' && <DeactivateModal agent={agent} onClose={() => setAction(undefined)} />}
      {reassigning && <AssignModal task={reassigning} onClose={() => setReassigning(undefined)} />}
    </Stack>
  );
}

function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Card withBorder padding="sm">
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="sm" component="div">
        {children}
      </Text>
    </Card>
  );
}

function VisitName({ kind, reference, business }: { kind: 'address' | 'business'; reference: string; business?: string | undefined }) {
  return (
    <Stack gap={0}>
      <Text size="sm" ff="monospace">
        {reference}
      </Text>
      <Text size="xs" c="dimmed">
        {kind === 'business' ? `Business${business ? `: ${business}` : ''}` : 'Address'}
      </Text>
    </Stack>
  );
}

function Due({ at }: { at: string }) {
  const late = new Date(at).getTime() < Date.now();
  return (
    <Text size="sm" c={late ? 'red.8' : undefined} fw={late ? 600 : undefined}>
      {formatDateTime(at)}
      {late ? ' (overdue)' : ''}
    </Text>
  );
}
