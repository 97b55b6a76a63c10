import { Badge, Button, Card, Group, Modal, SegmentedControl, Stack, Text, Title, Tooltip, VisuallyHidden } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { api, errorMessage, unwrap } from '../api/client';
import type { operations } from '../api/schema';
import { formatDateTime } from '../components/format';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { DataTable } from '../components/table';

type Backlog = operations['consoleWebhookBacklog']['responses'][200]['content']['application/json']['data'][number];
type Delivery = operations['consoleListDeliveries']['responses'][200]['content']['application/json']['data'][number];
type Invitation = operations['consoleListInvitations']['responses'][200]['content']['application/json']['data'][number];
const PAGE = 25;

/** "3 h 20 min" since an instant: how long the oldest delivery has waited. */
function age(since: string, now = Date.now()): string {
  const minutes = Math.max(0, Math.floor((now - new Date(since).getTime()) / 60_000));
  if (minutes < 1) return 'under a minute';
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days`;
}

function lastFailure(status: number | null, error: string | null): string {
  if (status !== null && error) return error.startsWith('HTTP') ? error : `HTTP ${status}: ${error}`;
  return error ?? (status !== null ? `HTTP ${status}` : '—');
}

/** Webhook queues and failing endpoints, failed deliveries to resend, and respondent invitations waiting or lapsed. */
export function DeliveriesPage() {
  return (
    <Stack gap="lg">
      <div>
        <Title order={2}>Deliveries and queues</Title>
        <Text size="sm" c="dimmed">
          Webhooks waiting or failing per organization, endpoints the workers are holding, and guarantor or employer invitations still unanswered.
        </Text>
      </div>
      <BacklogSection />
      <FailingEndpointsSection />
      <FailedDeliveriesSection />
      <InvitationsSection />
    </Stack>
  );
}

function Section({ id, title, description, children, action }: { id: string; title: string; description: string; children: ReactNode; action?: ReactNode }) {
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

function BacklogSection() {
  const [resending, setResending] = useState<Backlog | undefined>();
  const backlog = useQuery({ queryKey: ['console', 'deliveries', 'backlog'], queryFn: () => unwrap(api.GET('/api/console/deliveries/backlog')), refetchInterval: 30_000 });
  return (
    <Section id="backlog-title" title="Webhook backlog" description="Per organization and mode: events waiting for their first attempt, retrying after a failure, and failed for good.">
      {backlog.isPending ? (
        <LoadingState label="Loading the backlog…" />
      ) : backlog.isError ? (
        <ErrorAlert error={backlog.error} onRetry={() => void backlog.refetch()} />
      ) : backlog.data.data.length === 0 ? (
        <EmptyState title="Every webhook is delivered">No organization has events waiting, retrying or failed. Failed deliveries appear here until they are resent or retention removes them.</EmptyState>
      ) : (
        <DataTable
          caption="Webhook backlog"
          rows={backlog.data.data}
          rowKey={(row) => `${row.orgId}-${row.mode}`}
          minWidth={860}
          columns={[
            { key: 'org', header: 'Organization', cell: (row) => row.orgName },
            { key: 'mode', header: 'Mode', cell: (row) => <Badge variant="light" color={row.mode === 'live' ? 'grape' : 'gray'}>{row.mode}</Badge> },
            { key: 'waiting', header: 'Waiting', align: 'right', cell: (row) => row.waiting },
            { key: 'retrying', header: 'Retrying', align: 'right', cell: (row) => row.retrying },
            { key: 'oldest', header: 'Oldest waiting', cell: (row) => (row.oldestPendingAt ? <span title={formatDateTime(row.oldestPendingAt)}>{age(row.oldestPendingAt)}</span> : '—') },
            { key: 'failed', header: 'Failed', align: 'right', cell: (row) => (row.failed > 0 ? <Text span c="red.8" fw={600}>{row.failed}</Text> : 0) },
            {
              key: 'endpoint',
              header: 'Endpoint',
              cell: (row) =>
                row.endpoint === null ? (
                  <Text span size="sm" c="dimmed">
                    No URL set
                  </Text>
                ) : (
                  <Group gap={6} wrap="nowrap">
                    <Text span size="sm" style={{ overflowWrap: 'anywhere' }}>
                      {row.endpoint}
                    </Text>
                    {row.circuitOpen && <Badge color="red">Circuit open</Badge>}
                  </Group>
                ),
            },
            {
              key: 'actions',
              header: <VisuallyHidden>Actions</VisuallyHidden>,
              cell: (row) =>
                row.failed > 0 ? (
                  <Button size="xs" variant="light" onClick={() => setResending(row)} aria-label={`Resend the ${row.failed} failed ${row.mode} deliveries of ${row.orgName}`}>
                    Resend failed
                  </Button>
                ) : null,
            },
          ]}
        />
      )}
      {resending && <ResendFailedModal row={resending} onClose={() => setResending(undefined)} />}
    </Section>
  );
}

function ResendFailedModal({ row, onClose }: { row: Backlog; onClose(): void }) {
  const queryClient = useQueryClient();
  const resend = useMutation({
    mutationFn: () => unwrap(api.POST('/api/console/deliveries/resend-failed', { body: { orgId: row.orgId, mode: row.mode } })),
    onSuccess: async ({ resent }) => {
      notifications.show({ color: 'green', message: `${resent} ${resent === 1 ? 'delivery' : 'deliveries'} of ${row.orgName} queued again` });
      await queryClient.invalidateQueries({ queryKey: ['console', 'deliveries'] });
      onClose();
    },
  });
  return (
    <Modal opened onClose={onClose} title={`Resend the failed ${row.mode} deliveries of ${row.orgName}`}>
      <Stack gap="sm">
        <Text size="sm">
          {row.failed} failed {row.failed === 1 ? 'delivery goes' : 'deliveries go'} to {row.endpoint ?? 'the endpoint (none is set yet)'} again now, each with its own webhook-id and a fresh retry schedule. The audit log names you.
        </Text>
        {row.circuitOpen && <Text size="sm" c="orange.8">This endpoint's circuit is open: the deliveries wait for its next probe to answer.</Text>}
        {resend.error && (
          <Text c="red" size="sm" role="alert">
            {errorMessage(resend.error)}
          </Text>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button onClick={() => resend.mutate()} loading={resend.isPending}>
            Resend {row.failed}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

function FailingEndpointsSection() {
  const endpoints = useQuery({ queryKey: ['console', 'deliveries', 'failing-endpoints'], queryFn: () => unwrap(api.GET('/api/console/deliveries/failing-endpoints')), refetchInterval: 30_000 });
  return (
    <Section id="failing-title" title="Failing endpoints" description="Endpoints whose circuit breaker is open: their deliveries are held, and one probe goes when the cool-down ends.">
      {endpoints.isPending ? (
        <LoadingState label="Loading failing endpoints…" />
      ) : endpoints.isError ? (
        <ErrorAlert error={endpoints.error} onRetry={() => void endpoints.refetch()} />
      ) : endpoints.data.data.length === 0 ? (
        <EmptyState title="No endpoint is failing">When an endpoint keeps failing, the workers hold its deliveries and it shows here with its last error.</EmptyState>
      ) : (
        <DataTable
          caption="Failing endpoints"
          rows={endpoints.data.data}
          rowKey={(row) => `${row.orgId}-${row.mode}`}
          minWidth={860}
          columns={[
            { key: 'org', header: 'Organization', cell: (row) => `${row.orgName} (${row.mode})` },
            { key: 'endpoint', header: 'Endpoint', cell: (row) => <Text span size="sm" style={{ overflowWrap: 'anywhere' }}>{row.endpoint}</Text> },
            { key: 'since', header: 'Open since', cell: (row) => formatDateTime(row.openedAt) },
            { key: 'error', header: 'Last error', cell: (row) => `${lastFailure(row.lastStatusCode, row.lastError)} (${row.failures} in a row)` },
            { key: 'probe', header: 'Next probe', cell: (row) => (new Date(row.probeAt).getTime() > Date.now() ? formatDateTime(row.probeAt) : 'With its next delivery') },
            { key: 'pending', header: 'Held', align: 'right', cell: (row) => row.pending },
          ]}
        />
      )}
    </Section>
  );
}

function FailedDeliveriesSection() {
  const queryClient = useQueryClient();
  const [offset, setOffset] = useState(0);
  const failed = useQuery({
    queryKey: ['console', 'deliveries', 'failed', offset],
    queryFn: () => unwrap(api.GET('/api/console/deliveries', { params: { query: { status: 'failed', limit: PAGE, offset } } })),
    placeholderData: keepPreviousData,
  });
  const resend = useMutation({
    mutationFn: (delivery: Delivery) => unwrap(api.POST('/api/console/deliveries/{deliveryId}/resend', { params: { path: { deliveryId: String(delivery.id) } } })),
    onSuccess: async (_, delivery) => {
      notifications.show({ color: 'green', message: `${delivery.type} to ${delivery.orgName} queued again` });
      await queryClient.invalidateQueries({ queryKey: ['console', 'deliveries'] });
    },
    onError: (error) => notifications.show({ color: 'red', message: errorMessage(error) }),
  });
  return (
    <Section id="failed-title" title="Failed deliveries" description="Every retry used. Resend one once its endpoint works again: the same webhook-id, so the receiver can tell it from a new event.">
      {failed.isPending ? (
        <LoadingState label="Loading failed deliveries…" />
      ) : failed.isError ? (
        <ErrorAlert error={failed.error} onRetry={() => void failed.refetch()} />
      ) : failed.data.data.length === 0 ? (
        <EmptyState title="No failed deliveries">Deliveries that used every retry appear here to resend.</EmptyState>
      ) : (
        <DataTable
          caption="Failed deliveries"
          rows={failed.data.data}
          rowKey={(row) => String(row.id)}
          page={{ offset, limit: PAGE, total: failed.data.total, onChange: setOffset }}
          minWidth={860}
          columns={[
            { key: 'org', header: 'Organization', cell: (row) => `${row.orgName} (${row.mode})` },
            { key: 'type', header: 'Event', cell: (row) => row.type },
            { key: 'id', header: 'Webhook id', cell: (row) => <Text span size="xs" ff="monospace">{row.webhookId}</Text> },
            { key: 'made', header: 'Made', cell: (row) => formatDateTime(row.createdAt) },
            { key: 'error', header: 'Last error', cell: (row) => `${lastFailure(row.lastStatusCode, row.lastError)} · ${row.attemptCount} attempts` },
            {
              key: 'actions',
              header: <VisuallyHidden>Actions</VisuallyHidden>,
              cell: (row) => (
                <Button
                  size="xs"
                  variant="light"
                  onClick={() => resend.mutate(row)}
                  loading={resend.isPending && resend.variables?.id === row.id}
                  aria-label={`Resend delivery ${row.id} (${row.type}) to ${row.orgName}`}
                >
                  Resend
                </Button>
              ),
            },
          ]}
        />
      )}
    </Section>
  );
}

function InvitationsSection() {
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<'pending' | 'expired'>('pending');
  const [offset, setOffset] = useState(0);
  const counts = useQuery({ queryKey: ['console', 'invitations', 'counts'], queryFn: () => unwrap(api.GET('/api/console/invitations/counts')) });
  const list = useQuery({
    queryKey: ['console', 'invitations', status, offset],
    queryFn: () => unwrap(api.GET('/api/console/invitations', { params: { query: { status, limit: PAGE, offset } } })),
    placeholderData: keepPreviousData,
  });
  const resend = useMutation({
    mutationFn: (invitation: Invitation) =>
      unwrap(
        api.POST('/api/console/invitations/{kind}/{verificationId}/resend', {
          params: { path: { kind: invitation.kind, verificationId: String(invitation.verificationId) } },
        }),
      ),
    onSuccess: async (result, invitation) => {
      notifications.show(
        result.sent
          ? { color: 'green', message: `Invitation for ${invitation.reference} sent again to ${invitation.recipient ?? 'the respondent'}` }
          : { color: 'red', message: `The mail server did not take it: ${result.error ?? 'no reason given'}` },
      );
      await queryClient.invalidateQueries({ queryKey: ['console', 'invitations'] });
    },
    onError: (error) => notifications.show({ color: 'red', message: errorMessage(error) }),
  });
  const mailConfigured = list.data?.mailConfigured ?? counts.data?.mailConfigured ?? false;
  return (
    <Section
      id="invitations-title"
      title="Respondent invitations"
      description={`Guarantors and employers asked to answer by link: pending until they answer or the link expires (expired ones stay listed ${counts.data?.expiredWindowDays ?? 30} days). Addresses are masked.`}
      action={
        <SegmentedControl
          aria-label="Show invitations"
          size="xs"
          value={status}
          onChange={(value) => {
            setStatus(value as 'pending' | 'expired');
            setOffset(0);
          }}
          data={[
            { value: 'pending', label: 'Pending' },
            { value: 'expired', label: 'Expired' },
          ]}
        />
      }
    >
      {counts.data && counts.data.data.length > 0 && (
        <Group gap="xs" wrap="wrap" aria-label="Invitations per organization">
          {counts.data.data.map((row) => (
            <Badge key={`${row.orgId}-${row.mode}`} variant="outline" color={row.expired > 0 ? 'orange' : 'blue'} style={{ textTransform: 'none' }}>
              {row.orgName} ({row.mode}): {row.pending} pending · {row.expired} expired
            </Badge>
          ))}
        </Group>
      )}
      {!mailConfigured && (
        <Text size="sm" c="dimmed">
          No mail server is set (SMTP_URL), so invitations cannot be sent again from here: pass a link on by hand from <code>vouch outbox list</code>.
        </Text>
      )}
      {list.isPending ? (
        <LoadingState label="Loading invitations…" />
      ) : list.isError ? (
        <ErrorAlert error={list.error} onRetry={() => void list.refetch()} />
      ) : list.data.data.length === 0 ? (
        <EmptyState title={status === 'pending' ? 'No invitations waiting' : 'No invitations expired lately'}>
          {status === 'pending'
            ? 'Guarantor and employment verifications waiting for their respondent appear here.'
            : 'Invitations whose link expired unanswered appear here for a while, so you can tell the customer.'}
        </EmptyState>
      ) : (
        <DataTable
          caption="Respondent invitations"
          rows={list.data.data}
          rowKey={(row) => `${row.kind}-${row.verificationId}`}
          page={{ offset, limit: PAGE, total: list.data.total, onChange: setOffset }}
          minWidth={900}
          columns={[
            { key: 'org', header: 'Organization', cell: (row) => `${row.orgName} (${row.mode})` },
            { key: 'what', header: 'Verification', cell: (row) => `${row.kind} #${row.verificationId} · ${row.reference}` },
            { key: 'to', header: 'Respondent', cell: (row) => row.recipient ?? '—' },
            {
              key: 'sent',
              header: 'Sent',
              cell: (row) =>
                row.sentAt ? (
                  formatDateTime(row.sentAt)
                ) : row.sendError ? (
                  <Tooltip label={row.sendError}>
                    <Text span size="sm" c="red.8">
                      Not sent (mail refused)
                    </Text>
                  </Tooltip>
                ) : (
                  <Text span size="sm" c="dimmed">
                    Stored, not mailed
                  </Text>
                ),
            },
            { key: 'expires', header: expiryHeader(status), cell: (row) => formatDateTime(row.expiresAt) },
            { key: 'status', header: 'Status', cell: (row) => <Badge color={row.status === 'pending' ? 'yellow' : 'gray'}>{row.status}</Badge> },
            {
              key: 'actions',
              header: <VisuallyHidden>Actions</VisuallyHidden>,
              cell: (row) =>
                row.status === 'pending' && mailConfigured ? (
                  <Button
                    size="xs"
                    variant="light"
                    onClick={() => resend.mutate(row)}
                    loading={resend.isPending && resend.variables?.verificationId === row.verificationId && resend.variables.kind === row.kind}
                    aria-label={`Send the invitation for ${row.reference} again`}
                  >
                    Send again
                  </Button>
                ) : null,
            },
          ]}
        />
      )}
    </Section>
  );
}

function expiryHeader(status: 'pending' | 'expired'): string {
  return status === 'pending' ? 'Expires' : 'Expired';
}
