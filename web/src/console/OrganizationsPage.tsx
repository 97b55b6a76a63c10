import { Anchor, Badge, Button, Group, Modal, Stack, Text, Textarea, TextInput, Title, VisuallyHidden } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { api, errorMessage, unwrap } from '../api/client';
import type { operations } from '../api/schema';
import { formatDateTime, formatKobo } from '../components/format';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { DataTable } from '../components/table';

type Organization = operations['consoleListOrganizations']['responses'][200]['content']['application/json']['data'][number];
const PAGE = 20;

/** Every organization: search, wallet, members, last activity, and live API access on or off. */
export function OrganizationsPage() {
  const [search, setSearch] = useState('');
  const [q] = useDebouncedValue(search.trim(), 250);
  const [offset, setOffset] = useState(0);
  const [changing, setChanging] = useState<Organization | undefined>();
  const list = useQuery({
    queryKey: ['console', 'organizations', q, offset],
    queryFn: () => unwrap(api.GET('/api/console/organizations', { params: { query: { ...(q ? { q } : {}), limit: PAGE, offset } } })),
  });
  return (
    <Stack gap="md">
      <Title order={2}>Organizations</Title>
      <TextInput
        label="Search organizations"
        description="Part of the name, or the whole id"
        value={search}
        onChange={(event) => {
          setSearch(event.currentTarget.value);
          setOffset(0);
        }}
        maw={420}
      />
      {list.isPending ? (
        <LoadingState label="Loading organizations…" />
      ) : list.isError ? (
        <ErrorAlert error={list.error} onRetry={() => void list.refetch()} />
      ) : list.data.data.length === 0 ? (
        <EmptyState title={q ? 'No organization matches' : 'No organizations yet'}>
          {q ? 'Check the spelling, or search by the organization id.' : 'Customers appear here when they sign up in the portal or are created with vouch org create.'}
        </EmptyState>
      ) : (
        <DataTable
          caption="Organizations"
          rows={list.data.data}
          rowKey={(row) => row.id}
          page={{ offset, limit: PAGE, total: list.data.total, onChange: setOffset }}
          minWidth={820}
          columns={[
            {
              key: 'name',
              header: 'Organization',
              cell: (row) => (
                <Anchor component={Link} to={`/console/organizations/${row.id}`}>
                  {row.name}
                </Anchor>
              ),
            },
            {
              key: 'access',
              header: 'Live API',
              cell: (row) => (row.enabled ? <Badge color="green">{`On · ${row.riskLevel} · ${row.payloadType}`}</Badge> : <Badge color="gray">Off</Badge>),
            },
            { key: 'balance', header: 'Balance', align: 'right', cell: (row) => formatKobo(row.balance) },
            { key: 'members', header: 'Members', align: 'right', cell: (row) => row.members },
            { key: 'activity', header: 'Last activity', cell: (row) => (row.lastActivityAt ? formatDateTime(row.lastActivityAt) : 'None yet') },
            {
              key: 'action',
              header: <VisuallyHidden>Action</VisuallyHidden>,
              cell: (row) => (
                <Button size="xs" variant="light" color={row.enabled ? 'red' : 'blue'} onClick={() => setChanging(row)} aria-label={`${row.enabled ? 'Turn off' : 'Turn on'} live API access of ${row.name}`}>
                  {row.enabled ? 'Turn off' : 'Turn on'}
                </Button>
              ),
            },
          ]}
        />
      )}
      {changing && <AccessModal organization={changing} onClose={() => setChanging(undefined)} />}
    </Stack>
  );
}

/** Turning live access off needs a reason for the audit log; turning it on keeps the organization's risk level and payload type. */
function AccessModal({ organization, onClose }: { organization: Organization; onClose(): void }) {
  const queryClient = useQueryClient();
  const [reason, setReason] = useState('');
  const [reasonError, setReasonError] = useState<string | undefined>();
  const turningOff = organization.enabled;
  const change = useMutation({
    mutationFn: () =>
      turningOff
        ? unwrap(api.POST('/api/console/organizations/{orgId}/disable', { params: { path: { orgId: organization.id } }, body: { reason: reason.trim() } }))
        : unwrap(
            api.POST('/api/console/access-requests/{orgId}/approve', {
              params: { path: { orgId: organization.id } },
              body: { riskLevel: organization.riskLevel, payloadType: organization.payloadType },
            }),
          ),
    onSuccess: async () => {
      notifications.show({ color: 'green', message: `Live API access of ${organization.name} is ${turningOff ? 'off' : 'on'}` });
      await queryClient.invalidateQueries({ queryKey: ['console'] });
      onClose();
    },
  });
  const submit = () => {
    if (turningOff && !reason.trim()) {
      setReasonError('Say why, for the audit log');
      return;
    }
    setReasonError(undefined);
    change.mutate();
  };
  return (
    <Modal opened onClose={onClose} title={`${turningOff ? 'Turn off' : 'Turn on'} live API access of ${organization.name}`}>
      <Stack gap="sm">
        {turningOff ? (
          <>
            <Text size="sm">Its live secret stops working at once (within 5 seconds on every server). Test secrets keep working.</Text>
            <Textarea label="Reason" value={reason} onChange={(event) => setReason(event.currentTarget.value)} error={reasonError} maxLength={1000} autosize minRows={2} />
          </>
        ) : (
          <Text size="sm">
            Its live secret works again with risk level {organization.riskLevel} and payload type {organization.payloadType}. To change those, approve from Access requests instead.
          </Text>
        )}
        {change.error && (
          <Text c="red" size="sm" role="alert">
            {errorMessage(change.error)}
          </Text>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color={turningOff ? 'red' : 'blue'} onClick={submit} loading={change.isPending}>
            {turningOff ? 'Turn off live access' : 'Turn on live access'}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
