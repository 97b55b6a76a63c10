import { Alert, Badge, Button, Group, Modal, SegmentedControl, Stack, Text, Textarea, Title, VisuallyHidden } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, errorMessage, unwrap } from '../api/client';
import type { operations } from '../api/schema';
import { formatDateTime, formatKobo } from '../components/format';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { DataTable } from '../components/table';

type Entry = operations['consoleListFundingRequests']['responses'][200]['content']['application/json']['data'][number];
type Status = 'pending' | 'confirmed' | 'rejected' | 'all';
const PAGE = 50;

/** Bank transfers customers announced: confirm when the money is in the account (credits the wallet once), or reject. */
export function FundingsPage() {
  const [status, setStatus] = useState<Status>('pending');
  const [offset, setOffset] = useState(0);
  const [deciding, setDeciding] = useState<{ entry: Entry; action: 'confirm' | 'reject' } | undefined>();
  const list = useQuery({
    queryKey: ['console', 'funding-requests', status, offset],
    queryFn: () =>
      unwrap(api.GET('/api/console/funding-requests', { params: { query: { ...(status === 'all' ? {} : { status }), limit: PAGE, offset } } })),
  });
  return (
    <Stack gap="md">
      <Group justify="space-between" wrap="wrap">
        <Title order={2}>Fundings</Title>
        <SegmentedControl
          aria-label="Show fundings"
          value={status}
          onChange={(value) => {
            setStatus(value as Status);
            setOffset(0);
          }}
          data={[
            { value: 'pending', label: 'Pending' },
            { value: 'confirmed', label: 'Confirmed' },
            { value: 'rejected', label: 'Rejected' },
            { value: 'all', label: 'All' },
          ]}
        />
      </Group>
      <Text size="sm" c="dimmed">
        Confirm a transfer only once it is in the bank account, with the reference in its narration: confirming credits the wallet.
      </Text>
      {list.isPending ? (
        <LoadingState label="Loading fundings…" />
      ) : list.isError ? (
        <ErrorAlert error={list.error} onRetry={() => void list.refetch()} />
      ) : list.data.data.length === 0 ? (
        <EmptyState title={status === 'pending' ? 'No transfers waiting' : 'No fundings here'}>
          {status === 'pending'
            ? 'When a customer announces a bank transfer from their portal, it appears here to confirm or reject.'
            : 'Choose another filter above to see other fundings.'}
        </EmptyState>
      ) : (
        <DataTable
          caption="Fundings"
          rows={list.data.data}
          rowKey={(row) => row.id}
          page={{ offset, limit: PAGE, total: list.data.total, onChange: setOffset }}
          columns={[
            { key: 'org', header: 'Organization', cell: (row) => row.orgName },
            {
              key: 'reference',
              header: 'Reference',
              cell: (row) => (
                <Stack gap={2}>
                  <Text size="sm">{row.reference}</Text>
                  {row.alsoAnnouncedBy.length > 0 && (
                    <Badge color="orange" variant="light" title={sharedText(row)}>
                      Also announced by {row.alsoAnnouncedBy.length === 1 ? row.alsoAnnouncedBy[0]!.orgName : `${row.alsoAnnouncedBy.length} others`}
                    </Badge>
                  )}
                </Stack>
              ),
            },
            { key: 'amount', header: 'Amount', align: 'right', cell: (row) => formatKobo(row.amount) },
            { key: 'by', header: 'Announced by', cell: (row) => row.requestedBy ?? '—' },
            { key: 'when', header: 'Announced', cell: (row) => formatDateTime(row.createdAt) },
            { key: 'status', header: 'Status', cell: (row) => <StatusBadge entry={row} /> },
            {
              key: 'actions',
              header: <VisuallyHidden>Actions</VisuallyHidden>,
              cell: (row) =>
                row.status === 'pending' ? (
                  <Group gap="xs" wrap="nowrap">
                    <Button size="xs" onClick={() => setDeciding({ entry: row, action: 'confirm' })} aria-label={`Confirm ${row.reference} of ${row.orgName}`}>
                      Confirm
                    </Button>
                    <Button size="xs" color="red" variant="light" onClick={() => setDeciding({ entry: row, action: 'reject' })} aria-label={`Reject ${row.reference} of ${row.orgName}`}>
                      Reject
                    </Button>
                  </Group>
                ) : null,
            },
          ]}
        />
      )}
      {deciding && <DecisionModal {...deciding} onClose={() => setDeciding(undefined)} />}
    </Stack>
  );
}

/** Who else announced this reference: references are unique per organization only. */
function sharedText(entry: Entry): string {
  const who = entry.alsoAnnouncedBy.map((other) => `${other.orgName} (${other.status}, ${formatKobo(other.amount)})`).join('; ');
  return `The same reference was announced by ${who}. Match the transfer by its sender's name, not its narration.`;
}

function StatusBadge({ entry }: { entry: Entry }) {
  const color = { pending: 'yellow', confirmed: 'green', rejected: 'red', withdrawn: 'gray' }[entry.status];
  return (
    <Badge color={color} title={entry.reason ?? undefined}>
      {entry.status}
    </Badge>
  );
}

function DecisionModal({ entry, action, onClose }: { entry: Entry; action: 'confirm' | 'reject'; onClose(): void }) {
  const queryClient = useQueryClient();
  const [reason, setReason] = useState('');
  const [reasonError, setReasonError] = useState<string | undefined>();
  const decide = useMutation({
    mutationFn: () =>
      action === 'confirm'
        ? unwrap(api.POST('/api/console/funding-requests/{id}/confirm', { params: { path: { id: entry.id } } }))
        : unwrap(api.POST('/api/console/funding-requests/{id}/reject', { params: { path: { id: entry.id } }, body: { reason: reason.trim() } })),
    onSuccess: async () => {
      notifications.show({
        color: 'green',
        message: action === 'confirm' ? `Credited ${formatKobo(entry.amount)} to ${entry.orgName}` : `Rejected ${entry.reference} of ${entry.orgName}`,
      });
      await queryClient.invalidateQueries({ queryKey: ['console', 'funding-requests'] });
      onClose();
    },
  });
  const submit = () => {
    if (action === 'reject' && !reason.trim()) {
      setReasonError('Say why, for the customer: they read this in their portal and by mail');
      return;
    }
    setReasonError(undefined);
    decide.mutate();
  };
  return (
    <Modal opened onClose={onClose} title={action === 'confirm' ? `Confirm ${entry.reference}` : `Reject ${entry.reference}`}>
      <Stack gap="sm">
        <Text size="sm">
          {entry.orgName} announced {formatKobo(entry.amount)} with the reference <b>{entry.reference}</b> on {formatDateTime(entry.createdAt)}.
        </Text>
        {action === 'confirm' && entry.alsoAnnouncedBy.length > 0 && (
          <Alert color="orange" title="Another organization used this reference">
            {sharedText(entry)}
          </Alert>
        )}
        {action === 'confirm' ? (
          <Text size="sm">The wallet is credited with {formatKobo(entry.amount)} at once, and the customer is mailed.</Text>
        ) : (
          <Textarea
            label="Reason for the customer"
            value={reason}
            onChange={(event) => setReason(event.currentTarget.value)}
            error={reasonError}
            maxLength={500}
            autosize
            minRows={2}
          />
        )}
        {decide.error && (
          <Text c="red" size="sm" role="alert">
            {errorMessage(decide.error)}
          </Text>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color={action === 'confirm' ? 'blue' : 'red'} onClick={submit} loading={decide.isPending}>
            {action === 'confirm' ? `Credit ${formatKobo(entry.amount)}` : 'Reject'}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
