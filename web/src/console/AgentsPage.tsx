import { Anchor, Badge, Button, Group, Menu, Modal, Stack, Text, TextInput, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { api, errorMessage, unwrap } from '../api/client';
import { formatDateTime } from '../components/format';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { DataTable } from '../components/table';
import {
  AccountBadge,
  AssignModal,
  CoverageFields,
  CoverageModal,
  coverageText,
  DeactivateModal,
  InvitationLink,
  InviteModal,
  useAgents,
  type Agent,
  type FieldTask,
  type Invitation,
} from './agents-shared';

type Action = { kind: 'coverage' | 'invite' | 'deactivate'; agent: Agent };

/** The field agents: who covers what, their workload and accounts; add, change, invite, deactivate; and the visits nobody covers. */
export function AgentsPage() {
  const agents = useAgents();
  const [creating, setCreating] = useState(false);
  const [action, setAction] = useState<Action | undefined>();
  return (
    <Stack gap="md">
      <Group justify="space-between" wrap="wrap">
        <Title order={2}>Field agents</Title>
        <Button onClick={() => setCreating(true)}>Add an agent</Button>
      </Group>
      <Text size="sm" c="dimmed">
        New visits go to an active agent who lists the place's LGA, else to one covering its whole state, the least busy first. Visits nobody covers wait below.
      </Text>
      {agents.isPending ? (
        <LoadingState label="Loading the agents…" />
      ) : agents.isError ? (
        <ErrorAlert error={agents.error} onRetry={() => void agents.refetch()} />
      ) : agents.data.data.length === 0 ? (
        <EmptyState title="No field agents yet" action={<Button onClick={() => setCreating(true)}>Add the first agent</Button>}>
          Add the people who visit addresses and businesses. Each gets a sign-in link for the field app on their phone.
        </EmptyState>
      ) : (
        <DataTable
          caption="Field agents"
          rows={agents.data.data}
          rowKey={(row) => row.id}
          minWidth={900}
          columns={[
            {
              key: 'name',
              header: 'Agent',
              cell: (row) => (
                <Stack gap={0}>
                  <Anchor component={Link} to={`/console/agents/${row.id}`}>
                    {row.name}
                  </Anchor>
                  <Text size="xs" c="dimmed">
                    {row.email} · {row.phone}
                  </Text>
                </Stack>
              ),
            },
            { key: 'covers', header: 'Covers', cell: (row) => coverageText(row) },
            { key: 'open', header: 'Open visits', align: 'right', cell: (row) => row.openTasks },
            { key: 'done', header: 'Completed', align: 'right', cell: (row) => row.completedVisits },
            { key: 'account', header: 'Field app', cell: (row) => <AccountBadge agent={row} /> },
            { key: 'status', header: 'Status', cell: (row) => (row.active ? <Badge color="green" variant="light">Active</Badge> : <Badge color="gray">Deactivated</Badge>) },
            {
              key: 'actions',
              header: 'Actions',
              cell: (row) =>
                row.active ? (
                  <Menu position="bottom-end" withinPortal>
                    <Menu.Target>
                      <Button size="xs" variant="light" aria-label={`Actions for ${row.name}`}>
                        Change…
                      </Button>
                    </Menu.Target>
                    <Menu.Dropdown>
                      <Menu.Item onClick={() => setAction({ kind: 'coverage', agent: row })}>Edit coverage</Menu.Item>
                      <Menu.Item onClick={() => setAction({ kind: 'invite', agent: row })}>New sign-in link</Menu.Item>
                      <Menu.Item color="red" onClick={() => setAction({ kind: 'deactivate', agent: row })}>
                        Deactivate
                      </Menu.Item>
                    </Menu.Dropdown>
                  </Menu>
                ) : null,
            },
          ]}
        />
      )}
      <UnassignedVisits />
      {creating && <CreateAgentModal onClose={() => setCreating(false)} />}
      {action?.kind === 'coverage' && <CoverageModal agent={action.agent} onClose={() => setAction(undefined)} />}
      {action?.kind === 'invite' && <InviteModal agent={action.agent} onClose={() => setAction(undefined)} />}
      {action?.kind === 'deactivate' && <DeactivateModal agent={action.agent} onClose={() => setAction(undefined)} />}
    </Stack>
  );
}

/** Live visits no active agent covers: the operator assigns them by hand. */
function UnassignedVisits() {
  const [assigning, setAssigning] = useState<FieldTask | undefined>();
  const tasks = useQuery({
    queryKey: ['console', 'field-tasks', 'unassigned'],
    queryFn: () => unwrap(api.GET('/api/console/field-tasks', { params: { query: { unassigned: true } } })),
  });
  return (
    <Stack gap="sm" mt="lg">
      <Title order={3} size="h4">
        Visits waiting for an agent
      </Title>
      {tasks.isPending ? (
        <LoadingState label="Loading the unassigned visits…" />
      ) : tasks.isError ? (
        <ErrorAlert error={tasks.error} onRetry={() => void tasks.refetch()} />
      ) : tasks.data.data.length === 0 ? (
        <Text size="sm" c="dimmed">
          None: every open visit has an agent. A visit lands here when no active agent covers its place.
        </Text>
      ) : (
        <DataTable
          caption="Visits waiting for an agent"
          rows={tasks.data.data}
          rowKey={(row) => `${row.kind}:${row.id}`}
          minWidth={760}
          columns={[
            { key: 'ref', header: 'Reference', cell: (row) => `${row.kind === 'business' ? 'Business' : 'Address'} ${row.reference}` },
            { key: 'org', header: 'Organization', cell: (row) => row.orgName },
            { key: 'place', header: 'Place', cell: (row) => `${row.place.street}, ${row.place.lga}, ${row.place.state}` },
            { key: 'due', header: 'Due', cell: (row) => formatDateTime(row.dueAt) },
            {
              key: 'assign',
              header: 'Action',
              cell: (row) => (
                <Button size="xs" onClick={() => setAssigning(row)} aria-label={`Assign ${row.reference}`}>
                  Assign
                </Button>
              ),
            },
          ]}
        />
      )}
      {assigning && <AssignModal task={assigning} onClose={() => setAssigning(undefined)} />}
    </Stack>
  );
}

function CreateAgentModal({ onClose }: { onClose(): void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [phone, setPhone] = useState('');
  const [states, setStates] = useState<string[]>([]);
  const [lgas, setLgas] = useState<string[]>([]);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [created, setCreated] = useState<{ agent: Agent; invitation: Invitation } | undefined>();
  const create = useMutation({
    mutationFn: () => unwrap(api.POST('/api/console/agents', { body: { name: name.trim(), email: email.trim(), phone: phone.trim(), states, lgas } })),
    onSuccess: async (result) => {
      setCreated(result);
      notifications.show({ color: 'green', message: `${result.agent.name} is added; the sign-in link was mailed` });
      await queryClient.invalidateQueries({ queryKey: ['console', 'agents'] });
    },
  });
  const submit = () => {
    const found: Record<string, string> = {};
    if (!name.trim()) found.name = 'The agent\'s full name';
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim())) found.email = 'An email address of the agent\'s own: the sign-in link goes there';
    if (!phone.trim()) found.phone = 'A Nigerian phone number, e.g. 0803 123 4567';
    if (states.length === 0) found.states = 'Choose at least one state';
    setErrors(found);
    if (Object.keys(found).length === 0) create.mutate();
  };
  return (
    <Modal opened onClose={onClose} title={created ? `${created.agent.name} is added` : 'Add a field agent'} size="lg">
      {created ? (
        <Stack gap="sm">
          <InvitationLink invitation={created.invitation} />
          <Text size="sm">
            {created.agent.name} covers {coverageText(created.agent)}. Visits there are assigned to them from now on.
          </Text>
          <Group justify="flex-end">
            <Button onClick={onClose}>Done</Button>
          </Group>
        </Stack>
      ) : (
        <Stack gap="sm">
          <TextInput label="Full name" required value={name} onChange={(event) => setName(event.currentTarget.value)} error={errors.name} maxLength={200} />
          <TextInput label="Email" type="email" required value={email} onChange={(event) => setEmail(event.currentTarget.value)} error={errors.email} description="Their own address: the sign-in link is mailed there" />
          <TextInput label="Phone" type="tel" required value={phone} onChange={(event) => setPhone(event.currentTarget.value)} error={errors.phone} />
          <CoverageFields states={states} lgas={lgas} onStates={setStates} onLgas={setLgas} errors={{ states: errors.states }} />
          {create.error && (
            <Text c="red" size="sm" role="alert">
              {errorMessage(create.error)}
            </Text>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button onClick={submit} loading={create.isPending}>
              Add and send the link
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
