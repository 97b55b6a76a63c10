import { Alert, Badge, Button, Group, Modal, MultiSelect, Select, Stack, Text, Textarea } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, errorMessage, unwrap } from '../api/client';
import type { operations } from '../api/schema';
import { formatDateTime } from '../components/format';
import { CopyField } from '../components/layout-parts';

/** What the field-agent pages of the console share: the agent list, coverage, invitations, assignment. */

export type Agent = operations['consoleListAgents']['responses'][200]['content']['application/json']['data'][number];
export type Invitation = operations['consoleInviteAgent']['responses'][200]['content']['application/json'];
export type FieldTask = operations['consoleListFieldTasks']['responses'][200]['content']['application/json']['data'][number];

export function useAgents() {
  return useQuery({ queryKey: ['console', 'agents'], queryFn: () => unwrap(api.GET('/api/console/agents')) });
}

export function useLocations() {
  return useQuery({ queryKey: ['locations'], queryFn: () => unwrap(api.GET('/api/locations')), staleTime: Infinity });
}

/** "Lagos (Eti-Osa, Ikeja), Ogun": each state, with its LGAs when only some are covered. */
export function coverageText(agent: Pick<Agent, 'states' | 'lgas'>): string {
  return agent.states
    .map((state) => {
      const lgas = agent.lgas.filter((entry) => entry.startsWith(`${state}/`)).map((entry) => entry.slice(state.length + 1));
      return lgas.length ? `${state} (${lgas.join(', ')})` : state;
    })
    .join(', ');
}

export function AccountBadge({ agent }: { agent: Agent }) {
  if (agent.account === 'active') return <Badge color="teal" variant="light">Signed in</Badge>;
  if (agent.account === 'invited') {
    return (
      <Badge color="yellow" variant="light" title={agent.inviteExpiresAt ? `Link good until ${formatDateTime(agent.inviteExpiresAt)}` : 'The link has expired: send a new one'}>
        {agent.inviteExpiresAt ? 'Invited' : 'Link expired'}
      </Badge>
    );
  }
  return <Badge color="gray" variant="light">No account</Badge>;
}

/** States, then the LGAs within them (none chosen for a state: all of it). */
export function CoverageFields({ states, lgas, onStates, onLgas, errors }: { states: string[]; lgas: string[]; onStates(value: string[]): void; onLgas(value: string[]): void; errors?: { states?: string } }) {
  const locations = useLocations();
  const all = locations.data?.states ?? [];
  return (
    <>
      <MultiSelect
        label="States covered"
        required
        searchable
        data={all.map((state) => state.name)}
        value={states}
        onChange={(value) => {
          onStates(value);
          onLgas(lgas.filter((entry) => value.some((state) => entry.startsWith(`${state}/`))));
        }}
        placeholder={locations.isPending ? 'Loading the states…' : states.length ? undefined : 'Choose one or more'}
        error={errors?.states ?? (locations.isError ? 'The list of states could not be loaded; reload the page' : undefined)}
        nothingFoundMessage="No state by that name"
      />
      <MultiSelect
        label="Only these LGAs (optional)"
        description="Leave a state without LGAs to cover all of it. Visits in a listed LGA go to agents who list it first."
        searchable
        disabled={states.length === 0}
        data={states.map((state) => ({ group: state, items: (all.find((entry) => entry.name === state)?.lgas ?? []).map((lga) => ({ value: `${state}/${lga}`, label: lga })) }))}
        value={lgas}
        onChange={onLgas}
        placeholder={states.length ? 'All of each state' : 'Choose the states first'}
        nothingFoundMessage="No LGA by that name in these states"
        maxDropdownHeight={260}
      />
    </>
  );
}

export function CoverageModal({ agent, onClose }: { agent: Agent; onClose(): void }) {
  const queryClient = useQueryClient();
  const [states, setStates] = useState<string[]>(agent.states);
  const [lgas, setLgas] = useState<string[]>(agent.lgas);
  const [statesError, setStatesError] = useState<string | undefined>();
  const save = useMutation({
    mutationFn: () => unwrap(api.PUT('/api/console/agents/{agentId}/coverage', { params: { path: { agentId: agent.id } }, body: { states, lgas } })),
    onSuccess: async (saved) => {
      notifications.show({ color: 'green', message: `${agent.name} now covers ${coverageText(saved)}` });
      await queryClient.invalidateQueries({ queryKey: ['console', 'agents'] });
      await queryClient.invalidateQueries({ queryKey: ['console', 'agent', agent.id] });
      onClose();
    },
  });
  const submit = () => {
    if (states.length === 0) {
      setStatesError('Choose at least one state');
      return;
    }
    setStatesError(undefined);
    save.mutate();
  };
  return (
    <Modal opened onClose={onClose} title={`What ${agent.name} covers`}>
      <Stack gap="sm">
        <CoverageFields states={states} lgas={lgas} onStates={setStates} onLgas={setLgas} errors={{ states: statesError }} />
        <Text size="xs" c="dimmed">
          New visits are assigned by this; visits already assigned stay with {agent.name}.
        </Text>
        {save.error && (
          <Text c="red" size="sm" role="alert">
            {errorMessage(save.error)}
          </Text>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button onClick={submit} loading={save.isPending}>
            Save coverage
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** The one-time link, shown once: copy it to the agent (a text message) if the mail may not reach them. */
export function InvitationLink({ invitation }: { invitation: Invitation }) {
  return (
    <Alert color="teal" title="Sign-in link (shown only now)">
      <Stack gap="xs">
        <Text size="sm">
          Mailed to {invitation.email}. It works once, until {formatDateTime(invitation.linkExpiresAt)}: the agent opens it on their phone, chooses a password and lands in the field app.
        </Text>
        <CopyField label="One-time sign-in link" value={invitation.signInLink} multiline />
      </Stack>
    </Alert>
  );
}

export function InviteModal({ agent, onClose }: { agent: Agent; onClose(): void }) {
  const queryClient = useQueryClient();
  const invite = useMutation({
    mutationFn: () => unwrap(api.POST('/api/console/agents/{agentId}/invite', { params: { path: { agentId: agent.id } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['console', 'agents'] }),
  });
  return (
    <Modal opened onClose={onClose} title={`New sign-in link for ${agent.name}`}>
      <Stack gap="sm">
        {invite.data ? (
          <InvitationLink invitation={invite.data} />
        ) : (
          <Text size="sm">A new one-time link is mailed to {agent.email} and shown here once. Earlier links stop working; a password already set keeps working.</Text>
        )}
        {invite.error && (
          <Text c="red" size="sm" role="alert">
            {errorMessage(invite.error)}
          </Text>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            {invite.data ? 'Done' : 'Cancel'}
          </Button>
          {!invite.data && (
            <Button onClick={() => invite.mutate()} loading={invite.isPending}>
              Send a new link
            </Button>
          )}
        </Group>
      </Stack>
    </Modal>
  );
}

export function DeactivateModal({ agent, onClose }: { agent: Agent; onClose(): void }) {
  const queryClient = useQueryClient();
  const deactivate = useMutation({
    mutationFn: () => unwrap(api.POST('/api/console/agents/{agentId}/deactivate', { params: { path: { agentId: agent.id } } })),
    onSuccess: async (result) => {
      const unassigned = result.moved.filter((task) => task.agentId === null).length;
      notifications.show({
        color: 'green',
        message: `${agent.name} is deactivated. ${result.moved.length} open visit${result.moved.length === 1 ? '' : 's'} moved${unassigned ? `, ${unassigned} to the unassigned queue` : ''}.`,
      });
      await queryClient.invalidateQueries({ queryKey: ['console'] });
      onClose();
    },
  });
  return (
    <Modal opened onClose={onClose} title={`Deactivate ${agent.name}?`}>
      <Stack gap="sm">
        <Text size="sm">
          {agent.name} is signed out of the field app at once and can no longer sign in or use an API credential. Their {agent.openTasks} open visit{agent.openTasks === 1 ? '' : 's'} go to other agents covering the place, or to the unassigned
          queue. Reports already waiting in the review queue stay there. This cannot be undone from the console.
        </Text>
        {deactivate.error && (
          <Text c="red" size="sm" role="alert">
            {errorMessage(deactivate.error)}
          </Text>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color="red" onClick={() => deactivate.mutate()} loading={deactivate.isPending}>
            Deactivate {agent.name}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** Picks an active agent; those covering the place's state first. */
export function AgentSelect({ value, onChange, state, exclude, label = 'Agent' }: { value: string | null; onChange(value: string | null): void; state?: string; exclude?: string | null; label?: string }) {
  const agents = useAgents();
  const active = (agents.data?.data ?? []).filter((agent) => agent.active && agent.id !== exclude);
  const covering = active.filter((agent) => state && agent.states.includes(state));
  const others = active.filter((agent) => !covering.includes(agent));
  const option = (agent: Agent) => ({ value: agent.id, label: `${agent.name} · ${coverageText(agent)} · ${agent.openTasks} open` });
  const data = [
    ...(covering.length ? [{ group: `Covering ${state}`, items: covering.map(option) }] : []),
    ...(others.length ? [{ group: covering.length ? 'Others' : 'Active agents', items: others.map(option) }] : []),
  ];
  return (
    <Select
      label={label}
      required
      searchable
      data={data}
      value={value}
      onChange={onChange}
      placeholder={agents.isPending ? 'Loading the agents…' : active.length ? 'Choose an agent' : 'No active agent: add one on Field agents'}
      error={agents.isError ? 'The agents could not be loaded; reload the page' : undefined}
      nothingFoundMessage="No active agent by that name"
    />
  );
}

/** Gives an open visit to an agent of the operator's choosing. */
export function AssignModal({ task, onClose }: { task: FieldTask; onClose(): void }) {
  const queryClient = useQueryClient();
  const [agentId, setAgentId] = useState<string | null>(null);
  const [error, setError] = useState<string | undefined>();
  const assign = useMutation({
    mutationFn: () => unwrap(api.POST('/api/console/field-tasks/{kind}/{id}/assign', { params: { path: { kind: task.kind, id: String(task.id) } }, body: { agentId: agentId! } })),
    onSuccess: async (assigned) => {
      notifications.show({ color: 'green', message: `${task.reference} is now ${assigned.agentName ?? 'assigned'}'s` });
      await queryClient.invalidateQueries({ queryKey: ['console'] });
      onClose();
    },
  });
  return (
    <Modal opened onClose={onClose} title={task.agentId ? `Reassign ${task.reference}` : `Assign ${task.reference}`}>
      <Stack gap="sm">
        <Text size="sm">
          {task.kind === 'business' && task.business ? `${task.business.name}, ` : ''}
          {task.place.street}, {task.place.lga}, {task.place.state} — for {task.orgName}.
        </Text>
        <AgentSelect value={agentId} onChange={setAgentId} state={task.place.state} exclude={task.agentId} />
        {(error || assign.error) && (
          <Text c="red" size="sm" role="alert">
            {error ?? errorMessage(assign.error)}
          </Text>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button
            onClick={() => {
              if (!agentId) return setError('Choose the agent who will visit');
              setError(undefined);
              assign.mutate();
            }}
            loading={assign.isPending}
          >
            {task.agentId ? 'Reassign' : 'Assign'}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}

/** A note to the agent, required or not. */
export function NoteField({ value, onChange, error, required, label }: { value: string; onChange(value: string): void; error?: string; required: boolean; label: string }) {
  return <Textarea label={label} required={required} value={value} onChange={(event) => onChange(event.currentTarget.value)} error={error} maxLength={1000} autosize minRows={2} />;
}
