import { Alert, Badge, Button, Code, Drawer, Group, ScrollArea, SegmentedControl, Stack, Table, Text, Title, VisuallyHidden } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, errorMessage, unwrap } from '../../api/client';
import { formatDateTime, StatusBadge } from '../../components/format';
import { Pager } from '../../components/layout-parts';
import { EmptyState, ErrorAlert, LoadingState } from '../../components/states';
import { useCurrentOrg, type Mode } from '../context';
import { keys, LOG_PAGE, useDeliveries, useDelivery } from './queries';
import type { Delivery, DeliveryStatus } from './types';
import { SideScroll } from '../../components/SideScroll';

const FILTERS = [
  { value: 'all', label: 'All' },
  { value: 'delivered', label: 'Delivered' },
  { value: 'pending', label: 'Pending' },
  { value: 'failed', label: 'Failed' },
];

/** The mode's deliveries, newest first, with a filter, pages and a drawer per delivery. */
export function DeliveryLog({ mode }: { mode: Mode }) {
  const { orgId } = useCurrentOrg();
  const [status, setStatus] = useState<DeliveryStatus | undefined>(undefined);
  const [offset, setOffset] = useState(0);
  const [openId, setOpenId] = useState<number | null>(null);
  const log = useDeliveries(orgId, mode, { status, offset });
  const filter = (value: string) => {
    setStatus(value === 'all' ? undefined : (value as DeliveryStatus));
    setOffset(0);
  };
  return (
    <Stack gap="xs" component="section" aria-labelledby="delivery-log">
      <Group justify="space-between" wrap="wrap" gap="xs">
        <Title order={2} size="h4" id="delivery-log">
          Delivery log
        </Title>
        <SegmentedControl size="xs" aria-label="Show deliveries" data={FILTERS} value={status ?? 'all'} onChange={filter} />
      </Group>
      <Text size="sm" c="dimmed">
        Every event Vouch sent or will send to your {mode} endpoint, with each attempt.
        {log.data ? ` Deliveries are kept for ${log.data.retentionDays} days after they end.` : ''}
      </Text>
      {log.isPending ? (
        <LoadingState label="Loading the delivery log…" />
      ) : log.isError ? (
        <ErrorAlert error={log.error} onRetry={() => void log.refetch()} />
      ) : log.data.data.length === 0 ? (
        <EmptyState title={status ? `No ${status} deliveries` : 'No deliveries yet'}>
          {status
            ? 'Choose “All” to see every delivery of this mode.'
            : `Events appear here when a ${mode} verification completes or is cancelled, or when you send a test event.`}
        </EmptyState>
      ) : (
        <>
          <DeliveryTable deliveries={log.data.data} onOpen={setOpenId} />
          <Pager offset={offset} limit={LOG_PAGE} total={log.data.total} onChange={setOffset} />
          {log.data.totalCapped && (
            <Text size="xs" c="dimmed">
              More than {log.data.total.toLocaleString('en-NG')} deliveries: the log pages through the newest ones. Filter by status to find older failures.
            </Text>
          )}
        </>
      )}
      {openId !== null && <DeliveryDrawer mode={mode} id={openId} onClose={() => setOpenId(null)} />}
    </Stack>
  );
}

function DeliveryTable({ deliveries, onOpen }: { deliveries: Delivery[]; onOpen(id: number): void }) {
  return (
    <SideScroll minWidth={340}>
      <Table aria-label="Webhook deliveries" highlightOnHover verticalSpacing="xs">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Event</Table.Th>
            <Table.Th>Status</Table.Th>
            <Table.Th visibleFrom="sm">Attempts</Table.Th>
            <Table.Th visibleFrom="sm">Last answer</Table.Th>
            <Table.Th visibleFrom="md">Created</Table.Th>
            <Table.Th visibleFrom="md">Delivered</Table.Th>
            <Table.Th>
              <VisuallyHidden>Details</VisuallyHidden>
            </Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {deliveries.map((d) => (
            <Table.Tr key={d.id}>
              <Table.Td>
                <Text size="sm" ff="monospace">
                  {d.type}
                </Text>
                <Text size="xs" c="dimmed" hiddenFrom="md">
                  {formatDateTime(d.createdAt)}
                </Text>
              </Table.Td>
              <Table.Td>
                <StatusBadge status={d.status} />
              </Table.Td>
              <Table.Td visibleFrom="sm">{d.attemptCount}</Table.Td>
              <Table.Td visibleFrom="sm">{d.lastStatusCode ?? (d.lastError ? 'no answer' : '—')}</Table.Td>
              <Table.Td visibleFrom="md">{formatDateTime(d.createdAt)}</Table.Td>
              <Table.Td visibleFrom="md">{formatDateTime(d.deliveredAt)}</Table.Td>
              <Table.Td>
                <Button size="compact-xs" variant="subtle" onClick={() => onOpen(d.id)} aria-label={`Details of ${d.type} delivery ${d.id}`}>
                  Details
                </Button>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </SideScroll>
  );
}

function DeliveryDrawer({ mode, id, onClose }: { mode: Mode; id: number; onClose(): void }) {
  const { orgId, can } = useCurrentOrg();
  const queryClient = useQueryClient();
  const delivery = useDelivery(orgId, mode, id);
  const resend = useMutation({
    mutationFn: () => unwrap(api.POST('/api/orgs/{orgId}/webhook-deliveries/{deliveryId}/resend', { params: { path: { orgId, deliveryId: String(id) }, query: { mode } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: keys.deliveries(orgId, mode) }),
  });
  return (
    <Drawer opened onClose={onClose} position="right" size="lg" title={`Delivery ${id}`}>
      {delivery.isPending ? (
        <LoadingState label="Loading the delivery…" />
      ) : delivery.isError ? (
        <ErrorAlert error={delivery.error} onRetry={() => void delivery.refetch()} />
      ) : (
        <Stack>
          <Group gap="xs">
            <Badge variant="outline" tt="none">
              {delivery.data.type}
            </Badge>
            <StatusBadge status={delivery.data.status} />
          </Group>
          <Text size="sm" c="dimmed">
            webhook-id <Code>{delivery.data.webhookId}</Code> · created {formatDateTime(delivery.data.createdAt)}
            {delivery.data.deliveredAt ? ` · delivered ${formatDateTime(delivery.data.deliveredAt)}` : ''}
            {delivery.data.nextAttemptAt ? ` · next attempt ${formatDateTime(delivery.data.nextAttemptAt)}` : ''}
          </Text>
          {!delivery.data.sendable && (
            <Alert color="gray" title="Not sent">
              No {mode} webhook URL was set when this event happened, so Vouch did not keep its body (the verification record) and cannot send it. Read the
              verification on its page or with GET.
            </Alert>
          )}
          {can('webhooks.manage') && delivery.data.sendable && (
            <Stack gap={4} align="flex-start">
              <Button onClick={() => resend.mutate()} loading={resend.isPending} disabled={resend.isSuccess}>
                {resend.isSuccess ? 'Queued again' : 'Resend'}
              </Button>
              <Text size="xs" c="dimmed">
                Sends the same event again now, with the same webhook-id, so your endpoint can tell it has seen it.
              </Text>
              {resend.error && (
                <Alert color="red" role="alert">
                  {errorMessage(resend.error)}
                </Alert>
              )}
            </Stack>
          )}
          <Title order={3} size="h5">
            Attempts
          </Title>
          {delivery.data.attempts.length === 0 ? (
            <Text size="sm" c="dimmed">
              Not attempted yet{delivery.data.nextAttemptAt ? `: the first attempt is due ${formatDateTime(delivery.data.nextAttemptAt)}` : ''}.
            </Text>
          ) : (
            <SideScroll minWidth={420}>
              <Table aria-label="Attempts" verticalSpacing="xs">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>Time</Table.Th>
                    <Table.Th>Status code</Table.Th>
                    <Table.Th>Duration</Table.Th>
                    <Table.Th>Error or answer</Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {delivery.data.attempts.map((a, index) => (
                    <Table.Tr key={`${a.attemptedAt}-${index}`}>
                      <Table.Td>{formatDateTime(a.attemptedAt)}</Table.Td>
                      <Table.Td>{a.statusCode ?? '—'}</Table.Td>
                      <Table.Td>{a.durationMs} ms</Table.Td>
                      <Table.Td>
                        {a.error && (
                          <Text size="sm" c="red">
                            {a.error}
                          </Text>
                        )}
                        {a.responseExcerpt && (
                          <Code block style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word', maxHeight: 120, overflow: 'auto' }}>
                            {a.responseExcerpt}
                          </Code>
                        )}
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </SideScroll>
          )}
          {delivery.data.sendable && (
            <>
              <Title order={3} size="h5">
                Body
              </Title>
              <Text size="xs" c="dimmed">
                Identity numbers, phone numbers, birth dates and email addresses are masked here (and in the errors and answers above), and photos are not shown; your endpoint received them in full.
              </Text>
              <ScrollArea.Autosize mah={360}>
                <Code block>{JSON.stringify(delivery.data.payload, null, 2)}</Code>
              </ScrollArea.Autosize>
            </>
          )}
        </Stack>
      )}
    </Drawer>
  );
}
