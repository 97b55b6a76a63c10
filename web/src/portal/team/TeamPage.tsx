import { Alert, Badge, Button, Card, Group, Modal, Select, Stack, Table, Text, TextInput, Title, VisuallyHidden } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, errorMessage, unwrap } from '../../api/client';
import type { operations } from '../../api/schema';
import { formatDateTime } from '../../components/format';
import { PageHeader } from '../../components/layout-parts';
import { ErrorAlert, LoadingState } from '../../components/states';
import { fieldError, formError } from '../auth/form-errors';
import { useCurrentOrg } from '../context';
import { SideScroll } from '../../components/SideScroll';

type Member = operations['portalListMembers']['responses'][200]['content']['application/json']['data'][number];
type Role = Member['role'];

/** What each role may do: the server's matrix (src/portal/roles.ts) in words. */
const ROLES: { value: Role; label: string; may: string }[] = [
  { value: 'owner', label: 'Owner', may: 'Everything an admin may, and grant or take the owner role.' },
  { value: 'admin', label: 'Admin', may: 'Invite and remove members, request live access, fund the wallet, plus all a developer may.' },
  { value: 'developer', label: 'Developer', may: 'See the test secret, roll secrets, set webhooks, create and cancel verifications.' },
  { value: 'viewer', label: 'Viewer', may: 'See verifications, webhooks, usage, billing and the team. No secrets, no changes.' },
];

export function TeamPage() {
  const { orgId, orgName, role: myRole, can } = useCurrentOrg();
  const manage = can('team.manage');
  const roleChoices = ROLES.filter((r) => myRole === 'owner' || r.value !== 'owner');
  const members = useQuery({ queryKey: ['members', orgId], queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/members', { params: { path: { orgId } } })) });

  return (
    <Stack gap="lg">
      <PageHeader title="Team" description={`The people of ${orgName} and what each may do.`} />
      {manage ? (
        <InviteForm roleChoices={roleChoices} />
      ) : (
        <Alert color="gray" role="note">
          You can see the team as {myRole}. Only owners and admins invite people or change roles: ask one of them.
        </Alert>
      )}
      <Stack gap="xs">
        <Title order={2} size="h4">
          Members
        </Title>
        {members.isPending ? (
          <LoadingState label="Loading the members…" />
        ) : members.isError ? (
          <ErrorAlert error={members.error} onRetry={() => void members.refetch()} />
        ) : (
          <MembersTable members={members.data.data} roleChoices={roleChoices} />
        )}
      </Stack>
      <Invitations />
      <RolesExplained />
    </Stack>
  );
}

function InviteForm({ roleChoices }: { roleChoices: typeof ROLES }) {
  const { orgId } = useCurrentOrg();
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('developer');
  const invite = useMutation({
    mutationFn: () => unwrap(api.POST('/api/orgs/{orgId}/invitations', { params: { path: { orgId } }, body: { email, role } })),
    onSuccess: () => {
      setEmail('');
      void queryClient.invalidateQueries({ queryKey: ['invitations', orgId] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    invite.mutate();
  };
  const general = formError(invite.error, ['email', 'role']);
  return (
    <Card withBorder component="form" noValidate onSubmit={submit} aria-label="Invite someone">
      <Stack>
        <Title order={2} size="h4">
          Invite someone
        </Title>
        {general && (
          <Alert color="red" role="alert">
            {general}
          </Alert>
        )}
        {invite.isSuccess && (
          <Alert color="teal" role="status">
            Invitation sent to {invite.data.email}. The link in the email works for 7 days.
          </Alert>
        )}
        <Group align="flex-start" wrap="wrap">
          <TextInput label="Email" type="email" value={email} onChange={(e) => setEmail(e.currentTarget.value)} error={fieldError(invite.error, 'email')} required w={{ base: '100%', sm: 280 }} />
          <Select
            label="Role"
            data={roleChoices.map((r) => ({ value: r.value, label: r.label }))}
            value={role}
            onChange={(value) => value && setRole(value as Role)}
            allowDeselect={false}
            error={fieldError(invite.error, 'role')}
            w={{ base: '100%', sm: 200 }}
          />
          <Button type="submit" loading={invite.isPending} mt={{ base: 0, sm: 25 }}>
            Send invitation
          </Button>
        </Group>
        <Text size="sm" c="dimmed">
          {ROLES.find((r) => r.value === role)?.label}: {ROLES.find((r) => r.value === role)?.may}
        </Text>
      </Stack>
    </Card>
  );
}

function MembersTable({ members, roleChoices }: { members: Member[]; roleChoices: typeof ROLES }) {
  const { orgId, orgName, role: myRole, can } = useCurrentOrg();
  const manage = can('team.manage');
  const queryClient = useQueryClient();
  const [removing, setRemoving] = useState<Member | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['members', orgId] });
  const changeRole = useMutation({
    mutationFn: (v: { member: Member; role: Role }) =>
      unwrap(api.PATCH('/api/orgs/{orgId}/members/{personId}', { params: { path: { orgId, personId: v.member.personId } }, body: { role: v.role } })),
    onSuccess: (_data, v) => {
      notifications.show({ color: 'teal', message: `${v.member.name} is now ${v.role}.` });
      void refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (member: Member) => unwrap(api.DELETE('/api/orgs/{orgId}/members/{personId}', { params: { path: { orgId, personId: member.personId } } })),
    onSuccess: (_data, member) => {
      setRemoving(null);
      if (member.you) {
        // Out of the organization: the portal starts again from the memberships left.
        window.location.assign('/');
        return;
      }
      notifications.show({ color: 'teal', message: `${member.name} was removed from ${orgName}.` });
      void refresh();
    },
  });
  const actionError = changeRole.error ?? (removing ? undefined : remove.error);
  const owners = members.filter((m) => m.role === 'owner').length;

  return (
    <>
      {actionError && (
        <Alert color="red" role="alert">
          {errorMessage(actionError)}
        </Alert>
      )}
      <SideScroll minWidth={340}>
        <Table aria-label="Members" verticalSpacing="sm">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Member</Table.Th>
              <Table.Th>Role</Table.Th>
              <Table.Th visibleFrom="sm">Joined</Table.Th>
              <Table.Th>
                <VisuallyHidden>Actions</VisuallyHidden>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {members.map((m) => {
              const editable = manage && !m.you && (m.role !== 'owner' || myRole === 'owner');
              // The last owner cannot leave: the server would refuse, so no button offers it.
              const canLeave = m.you && !(m.role === 'owner' && owners === 1);
              return (
                <Table.Tr key={m.personId}>
                  <Table.Td>
                    <Text size="sm" fw={500}>
                      {m.name}
                      {m.you && (
                        <Badge ml="xs" variant="light" size="sm">
                          you
                        </Badge>
                      )}
                    </Text>
                    <Text size="xs" c="dimmed" style={{ wordBreak: 'break-all' }}>
                      {m.email}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    {editable ? (
                      <Select
                        aria-label={`Role of ${m.email}`}
                        data={roleChoices.map((r) => ({ value: r.value, label: r.label }))}
                        value={m.role}
                        onChange={(value) => value && value !== m.role && changeRole.mutate({ member: m, role: value as Role })}
                        allowDeselect={false}
                        disabled={changeRole.isPending}
                        w={130}
                        size="xs"
                      />
                    ) : (
                      <Text size="sm">{ROLES.find((r) => r.value === m.role)?.label}</Text>
                    )}
                  </Table.Td>
                  <Table.Td visibleFrom="sm">{formatDateTime(m.joinedAt)}</Table.Td>
                  <Table.Td>
                    {(editable || canLeave) && (
                      <Button size="compact-sm" variant="subtle" color="red" onClick={() => setRemoving(m)} aria-label={m.you ? `Leave ${orgName}` : `Remove ${m.email}`}>
                        {m.you ? 'Leave' : 'Remove'}
                      </Button>
                    )}
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      </SideScroll>
      <Modal opened={removing !== null} onClose={() => setRemoving(null)} title={removing?.you ? `Leave ${orgName}?` : `Remove ${removing?.name}?`} centered>
        <Stack>
          <Text size="sm">
            {removing?.you
              ? `You lose access to ${orgName} at once. An owner or admin can invite you again.`
              : `${removing?.name} (${removing?.email}) loses access to ${orgName} at once, on every device. You can invite them again later.`}
          </Text>
          {remove.error && (
            <Alert color="red" role="alert">
              {errorMessage(remove.error)}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setRemoving(null)}>
              Cancel
            </Button>
            <Button color="red" loading={remove.isPending} onClick={() => removing && remove.mutate(removing)}>
              {removing?.you ? 'Leave' : 'Remove'}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}

function Invitations() {
  const { orgId, can } = useCurrentOrg();
  const manage = can('team.manage');
  const queryClient = useQueryClient();
  const invitations = useQuery({ queryKey: ['invitations', orgId], queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/invitations', { params: { path: { orgId } } })) });
  const revoke = useMutation({
    mutationFn: (invitationId: string) => unwrap(api.DELETE('/api/orgs/{orgId}/invitations/{invitationId}', { params: { path: { orgId, invitationId } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['invitations', orgId] }),
  });
  return (
    <Stack gap="xs">
      <Title order={2} size="h4">
        Pending invitations
      </Title>
      {revoke.error && (
        <Alert color="red" role="alert">
          {errorMessage(revoke.error)}
        </Alert>
      )}
      {invitations.isPending ? (
        <LoadingState label="Loading the invitations…" />
      ) : invitations.isError ? (
        <ErrorAlert error={invitations.error} onRetry={() => void invitations.refetch()} />
      ) : invitations.data.data.length === 0 ? (
        <Text size="sm" c="dimmed">
          No invitations waiting. {manage ? 'Invite someone above; they appear here until they accept.' : ''}
        </Text>
      ) : (
        <SideScroll minWidth={340}>
          <Table aria-label="Pending invitations">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Email</Table.Th>
                <Table.Th>Role</Table.Th>
                <Table.Th visibleFrom="sm">Sent</Table.Th>
                <Table.Th>Expires</Table.Th>
                {manage && (
                  <Table.Th>
                    <VisuallyHidden>Actions</VisuallyHidden>
                  </Table.Th>
                )}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {invitations.data.data.map((i) => (
                <Table.Tr key={i.id}>
                  <Table.Td style={{ wordBreak: 'break-all' }}>{i.email}</Table.Td>
                  <Table.Td>{ROLES.find((r) => r.value === i.role)?.label}</Table.Td>
                  <Table.Td visibleFrom="sm">{formatDateTime(i.createdAt)}</Table.Td>
                  <Table.Td>{formatDateTime(i.expiresAt)}</Table.Td>
                  {manage && (
                    <Table.Td>
                      <Button
                        size="compact-sm"
                        variant="subtle"
                        color="red"
                        loading={revoke.isPending && revoke.variables === i.id}
                        onClick={() => revoke.mutate(i.id)}
                        aria-label={`Revoke the invitation of ${i.email}`}
                      >
                        Revoke
                      </Button>
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </SideScroll>
      )}
    </Stack>
  );
}

function RolesExplained() {
  return (
    <Stack gap="xs">
      <Title order={2} size="h4">
        What each role may do
      </Title>
      <Table aria-label="Roles" variant="vertical" layout="fixed" withTableBorder>
        <Table.Tbody>
          {ROLES.map((r) => (
            <Table.Tr key={r.value}>
              <Table.Th w={110}>{r.label}</Table.Th>
              <Table.Td>{r.may}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Stack>
  );
}
