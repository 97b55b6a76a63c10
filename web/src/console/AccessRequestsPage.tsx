import { Badge, Button, Group, Modal, SegmentedControl, Select, Stack, Text, Textarea, Title, VisuallyHidden } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, errorMessage, unwrap } from '../api/client';
import type { operations } from '../api/schema';
import { formatDateTime } from '../components/format';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { DataTable } from '../components/table';

type Entry = operations['consoleListAccessRequests']['responses'][200]['content']['application/json']['data'][number];
type Status = 'pending' | 'approved' | 'declined' | 'all';
type RiskLevel = Entry['riskLevel'];
type PayloadType = Entry['payloadType'];

const RISK_LEVELS: { value: RiskLevel; label: string }[] = [
  { value: 'NONE', label: 'NONE: no applicant fields checked' },
  { value: 'LOW', label: 'LOW: last name' },
  { value: 'MEDIUM', label: 'MEDIUM: first and last name' },
  { value: 'HIGH', label: 'HIGH: names and date of birth' },
];
const PAYLOAD_TYPES: { value: PayloadType; label: string }[] = [
  { value: 'FULL', label: 'FULL: every field' },
  { value: 'HALF', label: 'HALF: no phone or photo on NIN' },
];

/** Requests for live API access from every organization; the pending ones are decided here. */
export function AccessRequestsPage() {
  const [status, setStatus] = useState<Status>('pending');
  const [reviewing, setReviewing] = useState<Entry | undefined>();
  const list = useQuery({
    queryKey: ['console', 'access-requests', status],
    queryFn: () => unwrap(api.GET('/api/console/access-requests', { params: { query: status === 'all' ? { limit: 200 } : { status, limit: 200 } } })),
  });
  return (
    <Stack gap="md">
      <Group justify="space-between" wrap="wrap">
        <Title order={2}>Access requests</Title>
        <SegmentedControl
          aria-label="Show requests"
          value={status}
          onChange={(value) => setStatus(value as Status)}
          data={[
            { value: 'pending', label: 'Pending' },
            { value: 'approved', label: 'Approved' },
            { value: 'declined', label: 'Declined' },
            { value: 'all', label: 'All' },
          ]}
        />
      </Group>
      {list.isPending ? (
        <LoadingState label="Loading requests…" />
      ) : list.isError ? (
        <ErrorAlert error={list.error} onRetry={() => void list.refetch()} />
      ) : list.data.data.length === 0 ? (
        <EmptyState title={status === 'pending' ? 'No requests waiting' : 'No requests here'}>
          {status === 'pending'
            ? 'When a customer asks for live API access from their portal, the request appears here to approve or decline.'
            : 'Choose another filter above to see other requests.'}
        </EmptyState>
      ) : (
        <DataTable
          caption="Access requests"
          rows={list.data.data}
          rowKey={(row) => row.id}
          columns={[
            { key: 'org', header: 'Organization', cell: (row) => row.orgName },
            { key: 'asked', header: 'Asked for', cell: (row) => `${row.riskLevel} · ${row.payloadType}` },
            { key: 'use', header: 'Use case', cell: (row) => row.useCase ?? '—' },
            { key: 'when', header: 'Asked', cell: (row) => formatDateTime(row.createdAt) },
            { key: 'status', header: 'Status', cell: (row) => <StatusBadge entry={row} /> },
            {
              key: 'action',
              header: <VisuallyHidden>Action</VisuallyHidden>,
              cell: (row) =>
                row.status === 'pending' ? (
                  <Button size="xs" onClick={() => setReviewing(row)} aria-label={`Review the request of ${row.orgName}`}>
                    Review
                  </Button>
                ) : null,
            },
          ]}
        />
      )}
      {reviewing && <ReviewModal entry={reviewing} onClose={() => setReviewing(undefined)} />}
    </Stack>
  );
}

function StatusBadge({ entry }: { entry: Entry }) {
  if (entry.status === 'approved') return <Badge color="green">{`Approved ${entry.decidedRiskLevel} · ${entry.decidedPayloadType}`}</Badge>;
  if (entry.status === 'declined') return <Badge color="red" title={entry.declineReason ?? undefined}>Declined</Badge>;
  return <Badge color="yellow">Pending</Badge>;
}

/** Approve as asked or with other values, or decline with a reason the customer reads. */
function ReviewModal({ entry, onClose }: { entry: Entry; onClose(): void }) {
  const queryClient = useQueryClient();
  const [riskLevel, setRiskLevel] = useState<RiskLevel>(entry.riskLevel);
  const [payloadType, setPayloadType] = useState<PayloadType>(entry.payloadType);
  const [reason, setReason] = useState('');
  const [reasonError, setReasonError] = useState<string | undefined>();
  const done = async (message: string) => {
    notifications.show({ color: 'green', message });
    await queryClient.invalidateQueries({ queryKey: ['console', 'access-requests'] });
    onClose();
  };
  const approve = useMutation({
    mutationFn: () => unwrap(api.POST('/api/console/access-requests/{orgId}/approve', { params: { path: { orgId: entry.orgId } }, body: { riskLevel, payloadType } })),
    onSuccess: () => done(`${entry.orgName} can now use the live API (${riskLevel} · ${payloadType})`),
  });
  const decline = useMutation({
    mutationFn: () => unwrap(api.POST('/api/console/access-requests/{orgId}/decline', { params: { path: { orgId: entry.orgId } }, body: { reason: reason.trim() } })),
    onSuccess: () => done(`Declined the request of ${entry.orgName}`),
  });
  const onDecline = () => {
    if (!reason.trim()) {
      setReasonError('Say why, for the customer: they read this in their portal and by mail');
      return;
    }
    setReasonError(undefined);
    decline.mutate();
  };
  const failed = approve.error ?? decline.error;
  return (
    <Modal opened onClose={onClose} title={`Access request of ${entry.orgName}`} size="lg">
      <Stack gap="sm">
        <Text size="sm">
          Asked for <b>{entry.riskLevel}</b> risk level and <b>{entry.payloadType}</b> payload on {formatDateTime(entry.createdAt)}.
          {entry.useCase ? ` Use case: ${entry.useCase}` : ''}
        </Text>
        <Select label="Risk level" data={RISK_LEVELS} value={riskLevel} onChange={(value) => value && setRiskLevel(value as RiskLevel)} allowDeselect={false} />
        <Select label="Payload type" data={PAYLOAD_TYPES} value={payloadType} onChange={(value) => value && setPayloadType(value as PayloadType)} allowDeselect={false} />
        <Group justify="flex-end">
          <Button onClick={() => approve.mutate()} loading={approve.isPending} disabled={decline.isPending}>
            Approve
          </Button>
        </Group>
        <Textarea
          label="Reason for the customer"
          description="Only to decline: the customer sees it in their portal and in the mail"
          value={reason}
          onChange={(event) => setReason(event.currentTarget.value)}
          error={reasonError}
          maxLength={1000}
          autosize
          minRows={2}
        />
        <Group justify="flex-end">
          <Button color="red" variant="light" onClick={onDecline} loading={decline.isPending} disabled={approve.isPending}>
            Decline
          </Button>
        </Group>
        {failed && (
          <Text c="red" size="sm" role="alert">
            {errorMessage(failed)}
          </Text>
        )}
      </Stack>
    </Modal>
  );
}
