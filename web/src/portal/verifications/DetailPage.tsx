import { Alert, Anchor, Badge, Button, Card, Code, Group, Image, Modal, SimpleGrid, Stack, Table, Text, Timeline, UnstyledButton } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { api, ApiRequestError, unwrap } from '../../api/client';
import { formatDateTime, StatusBadge } from '../../components/format';
import { PageHeader } from '../../components/layout-parts';
import { EmptyState, ErrorAlert, LoadingState } from '../../components/states';
import { useCurrentOrg, useMode } from '../context';
import { isKind, kindLabel, type Kind } from './labels';
import { ConfirmCancel, StatusPill, useCompact } from './parts';

const EVENTS: Record<string, string> = {
  created: 'Created',
  assigned: 'Assigned to a field agent',
  visited: 'Visit started',
  sent: 'Request sent',
  answered: 'Answered',
  completed: 'Completed',
  cancelled: 'Cancelled',
};

function Facts({ rows, empty }: { rows: { label: string; value: string }[]; empty?: string }) {
  if (rows.length === 0) return empty ? <Text size="sm" c="dimmed">{empty}</Text> : null;
  return (
    <Stack gap={6} component="dl" m={0}>
      {rows.map((row) => (
        <Group key={row.label} gap="xs" wrap="nowrap" align="flex-start">
          <Text component="dt" size="sm" c="dimmed" w={{ base: 110, sm: 170 }} style={{ flexShrink: 0 }}>
            {row.label}
          </Text>
          <Text component="dd" size="sm" m={0} style={{ overflowWrap: 'anywhere' }}>
            {row.value}
          </Text>
        </Group>
      ))}
    </Stack>
  );
}

export function DetailPage() {
  const params = useParams({ strict: false }) as { kind?: string; id?: string };
  if (!isKind(params.kind) || !/^\d+$/.test(params.id ?? '')) {
    return (
      <EmptyState title="No such verification" action={<Anchor component={Link} to="/verifications">All verifications</Anchor>}>
        This address does not name a verification.
      </EmptyState>
    );
  }
  return <Detail kind={params.kind} id={params.id!} />;
}

function Detail({ kind, id }: { kind: Kind; id: string }) {
  const compact = useCompact();
  const { orgId, can } = useCurrentOrg();
  const [mode] = useMode();
  const queryClient = useQueryClient();
  const [confirming, setConfirming] = useState(false);
  const [photo, setPhoto] = useState<string | null>(null);
  const request = { params: { path: { orgId, kind, id }, query: { mode } } };
  const key = ['verification', orgId, mode, kind, id];
  const detail = useQuery({ queryKey: key, queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/verifications/{kind}/{id}', request)) });
  const cancel = useMutation({
    mutationFn: () => unwrap(api.POST('/api/orgs/{orgId}/verifications/{kind}/{id}/cancel', request)),
    onSuccess: () => {
      setConfirming(false);
      void queryClient.invalidateQueries({ queryKey: key });
      void queryClient.invalidateQueries({ queryKey: ['verifications', orgId] });
    },
  });
  const back = (
    <Anchor component={Link} to="/verifications" search={{ tab: kind } as never}>
      ← All {kindLabel(kind).toLowerCase()}s
    </Anchor>
  );

  if (detail.isPending) return <LoadingState label="Loading the verification…" />;
  if (detail.isError) {
    const missing = detail.error instanceof ApiRequestError && detail.error.status === 404;
    return (
      <Stack>
        {missing ? (
          <EmptyState title="Verification not found" action={back}>
            There is no {kindLabel(kind).toLowerCase()} {id} in {mode} mode. It may belong to {mode === 'test' ? 'live' : 'test'} mode: switch modes in the header.
          </EmptyState>
        ) : (
          <>
            <ErrorAlert error={detail.error} onRetry={() => void detail.refetch()} />
            {back}
          </>
        )}
      </Stack>
    );
  }
  const d = detail.data;
  const mapUrl = d.gps ? `https://www.openstreetmap.org/?mlat=${d.gps.latitude}&mlon=${d.gps.longitude}#map=17/${d.gps.latitude}/${d.gps.longitude}` : undefined;
  const field = kind === 'address' || kind === 'business';

  return (
    <Stack gap="lg">
      <PageHeader
        title={`${kindLabel(kind)} ${d.reference}`}
        description={back}
        actions={
          d.cancellable && can('verifications.write') ? (
            <Button color="red" variant="light" onClick={() => setConfirming(true)}>
              Cancel verification
            </Button>
          ) : undefined
        }
      />
      <Group gap="sm" wrap="wrap">
        <StatusPill status={d.status} />
        {d.subStatus && (
          <Badge variant="outline" color="gray">
            {d.subStatus.replace(/_/g, ' ')}
          </Badge>
        )}
        {d.flaggedForReview && <Badge color="orange">Flagged for review: {d.flaggedForReview}</Badge>}
        <Text size="sm" c="dimmed">
          {d.subject} · created {formatDateTime(d.createdAt)}
          {d.completedAt ? ` · finished ${formatDateTime(d.completedAt)}` : ''} · id {d.id}
        </Text>
      </Group>
      {cancel.isSuccess && (
        <Alert color="gray" role="status">
          Cancelled. A cancellation webhook is on its way.
        </Alert>
      )}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Card withBorder component="section" aria-labelledby="details-title">
          <Text fw={600} mb="sm" id="details-title">
            Details
          </Text>
          <Facts rows={d.facts} />
        </Card>
        <Card withBorder component="section" aria-labelledby="timeline-title">
          <Text fw={600} mb="sm" id="timeline-title">
            Timeline
          </Text>
          <Timeline active={d.timeline.length - 1} bulletSize={14} lineWidth={2}>
            {d.timeline.map((t) => (
              <Timeline.Item key={t.event} title={EVENTS[t.event] ?? t.event}>
                {t.detail && t.detail !== EVENTS[t.event] && <Text size="sm">{t.detail}</Text>}
                <Text size="xs" c="dimmed">
                  {formatDateTime(t.at)}
                </Text>
              </Timeline.Item>
            ))}
          </Timeline>
          {d.status === 'in_progress' && (
            <Text size="xs" c="dimmed" mt="sm">
              {mode === 'test'
                ? `In test mode nobody ${field ? 'visits' : 'answers'}: finish it with POST /v1/test-helpers/${kind === 'business' ? 'businesses' : kind === 'address' ? 'addresses' : `${kind}s`}/${d.id}/complete.`
                : field
                  ? 'Next: a field agent visits and reports.'
                  : `Next: the ${kind === 'guarantor' ? 'guarantor' : 'employer'} answers through the link they were sent.`}
            </Text>
          )}
        </Card>
      </SimpleGrid>
      <Card withBorder component="section" aria-labelledby="findings-title">
        <Stack gap="sm">
          <Text fw={600} id="findings-title">
            {field ? 'What the agent found' : `What the ${kind === 'guarantor' ? 'guarantor' : 'employer'} answered`}
          </Text>
          <Facts rows={d.findings} empty={field ? 'Nothing yet: the report appears here once the field agent files it.' : 'Nothing yet: the answer appears here once it comes in.'} />
          {d.gps && (
            <Text size="sm">
              GPS point{' '}
              <Text span ff="monospace">
                {d.gps.latitude}, {d.gps.longitude}
              </Text>{' '}
              ·{' '}
              <Anchor href={mapUrl} target="_blank" rel="noreferrer">
                Open in a map
              </Anchor>
            </Text>
          )}
          {d.photos.length > 0 && (
            <SimpleGrid cols={{ base: 2, sm: 4 }}>
              {d.photos.map((src, index) => (
                <UnstyledButton key={src} onClick={() => setPhoto(src)} aria-label={`Open photo ${index + 1} full size`}>
                  <Image src={src} alt={`Visit photo ${index + 1}`} radius="sm" h={120} fit="cover" />
                </UnstyledButton>
              ))}
            </SimpleGrid>
          )}
          {d.related.map((r) => (
            <Text size="sm" key={`${r.kind}-${r.id}`}>
              {r.label}:{' '}
              <Anchor component={Link} to={`/verifications/${r.kind}/${r.id}`}>
                {kindLabel(r.kind)} {r.id}
              </Anchor>
            </Text>
          ))}
        </Stack>
      </Card>
      <Card withBorder component="section" aria-labelledby="deliveries-title">
        <Group justify="space-between" mb="sm">
          <Text fw={600} id="deliveries-title">
            Webhook deliveries
          </Text>
          <Anchor component={Link} to="/webhooks" size="sm">
            Webhook settings and log
          </Anchor>
        </Group>
        {d.deliveries.length === 0 ? (
          <Text size="sm" c="dimmed">
            None yet: a webhook event is sent when the verification completes or is cancelled, to the {mode} endpoint set on the Webhooks page.
          </Text>
        ) : (
          <Table aria-label="Webhook deliveries of this verification">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Event</Table.Th>
                <Table.Th>Status</Table.Th>
                {!compact && <Table.Th>Attempts</Table.Th>}
                {!compact && <Table.Th>Queued</Table.Th>}
                {!compact && <Table.Th>Delivered</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {d.deliveries.map((delivery) => {
                const attempts = `${delivery.attempts} attempt${delivery.attempts === 1 ? '' : 's'}${delivery.lastStatusCode ? `, last HTTP ${delivery.lastStatusCode}` : ''}`;
                return (
                  <Table.Tr key={delivery.id}>
                    <Table.Td>
                      <Text size="sm" ff="monospace">
                        {delivery.type}
                      </Text>
                      {compact && (
                        <Text size="xs" c="dimmed">
                          {formatDateTime(delivery.deliveredAt ?? delivery.createdAt)}
                        </Text>
                      )}
                    </Table.Td>
                    <Table.Td>
                      <StatusBadge status={delivery.status} />
                      {compact && (
                        <Text size="xs" c="dimmed">
                          {attempts}
                        </Text>
                      )}
                    </Table.Td>
                    {!compact && <Table.Td>{attempts}</Table.Td>}
                    {!compact && <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatDateTime(delivery.createdAt)}</Table.Td>}
                    {!compact && <Table.Td style={{ whiteSpace: 'nowrap' }}>{formatDateTime(delivery.deliveredAt)}</Table.Td>}
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        )}
      </Card>
      <details>
        <summary>
          <Text span size="sm">
            The record as the API returns it (identity numbers masked)
          </Text>
        </summary>
        <Code block mt="xs" style={{ maxHeight: 360, overflow: 'auto' }}>
          {JSON.stringify(d.record, null, 2)}
        </Code>
      </details>
      <Modal opened={photo !== null} onClose={() => setPhoto(null)} title="Visit photo" size="xl" centered>
        {photo && (
          <Stack>
            <Image src={photo} alt="Visit photo, full size" />
            <Anchor href={photo} target="_blank" rel="noreferrer" size="sm">
              Open in a new tab (the link works for a day)
            </Anchor>
          </Stack>
        )}
      </Modal>
      <ConfirmCancel opened={confirming} title="Cancel this verification?" onClose={() => setConfirming(false)} onConfirm={() => cancel.mutate()} pending={cancel.isPending} error={cancel.error}>
        It stops here and a cancellation webhook is sent.{' '}
        {mode === 'live' ? `The price is refunded while no ${field ? 'visit' : 'answer'} has started.` : 'Test mode charges nothing.'}
      </ConfirmCancel>
    </Stack>
  );
}
