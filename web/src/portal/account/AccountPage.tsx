import { Alert, Badge, Button, Card, Group, PasswordInput, Stack, Table, Text, TextInput, Title, VisuallyHidden } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, errorMessage, unwrap } from '../../api/client';
import { formatDateTime } from '../../components/format';
import { PageHeader } from '../../components/layout-parts';
import { ErrorAlert, LoadingState } from '../../components/states';
import { fieldError, formError } from '../auth/form-errors';
import { useMe } from '../context';
import { TwoFactor } from './TwoFactor';

export function AccountPage() {
  return (
    <Stack gap="lg" maw={880}>
      <PageHeader title="Account and security" description="Your profile, password, two-factor authentication and the devices signed in as you." />
      <Profile />
      <Password />
      <TwoFactor />
      <Sessions />
    </Stack>
  );
}

function Profile() {
  const me = useMe();
  const queryClient = useQueryClient();
  const [name, setName] = useState(me.data?.person.name ?? '');
  const save = useMutation({
    mutationFn: () => unwrap(api.PATCH('/api/account', { body: { name } })),
    onSuccess: () => {
      notifications.show({ color: 'teal', message: 'Your name is saved.' });
      void queryClient.invalidateQueries({ queryKey: ['me'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  const person = me.data?.person;
  return (
    <Card withBorder component="form" noValidate onSubmit={submit} aria-labelledby="profile-title">
      <Stack>
        <Title order={2} size="h4" id="profile-title">
          Profile
        </Title>
        <Group gap="xs">
          <Text size="sm">{person?.email}</Text>
          {person?.emailVerified ? (
            <Badge color="teal" variant="light">
              email confirmed
            </Badge>
          ) : (
            <Badge color="yellow" variant="light">
              email not confirmed
            </Badge>
          )}
        </Group>
        {formError(save.error, ['name']) && (
          <Alert color="red" role="alert">
            {formError(save.error, ['name'])}
          </Alert>
        )}
        <Group align="flex-start" wrap="wrap">
          <TextInput label="Name" autoComplete="name" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError(save.error, 'name')} w={{ base: '100%', sm: 320 }} />
          <Button type="submit" loading={save.isPending} mt={{ base: 0, sm: 25 }}>
            Save name
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

function Password() {
  const [currentPassword, setCurrent] = useState('');
  const [newPassword, setNext] = useState('');
  const queryClient = useQueryClient();
  const change = useMutation({
    mutationFn: () => unwrap(api.POST('/api/account/password', { body: { currentPassword, newPassword } })),
    onSuccess: () => {
      setCurrent('');
      setNext('');
      void queryClient.invalidateQueries({ queryKey: ['sessions'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    change.mutate();
  };
  const general = formError(change.error, ['currentPassword', 'newPassword']);
  return (
    <Card withBorder component="form" noValidate onSubmit={submit} aria-labelledby="password-title">
      <Stack>
        <Title order={2} size="h4" id="password-title">
          Password
        </Title>
        {general && (
          <Alert color="red" role="alert">
            {general}
          </Alert>
        )}
        {change.isSuccess && (
          <Alert color="teal" role="status">
            Password changed. Your other devices were signed out; this one stays signed in.
          </Alert>
        )}
        <Group align="flex-start" wrap="wrap">
          <PasswordInput
            label="Current password"
            autoComplete="current-password"
            value={currentPassword}
            onChange={(e) => setCurrent(e.currentTarget.value)}
            error={fieldError(change.error, 'currentPassword')}
            w={{ base: '100%', sm: 250 }}
          />
          <PasswordInput
            label="New password"
            description="At least 10 characters"
            autoComplete="new-password"
            value={newPassword}
            onChange={(e) => setNext(e.currentTarget.value)}
            error={fieldError(change.error, 'newPassword')}
            w={{ base: '100%', sm: 250 }}
          />
          <Button type="submit" loading={change.isPending} mt={{ base: 0, sm: 25 }}>
            Change password
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

function describeDevice(userAgent: string | null): string {
  if (!userAgent) return 'Unknown device';
  const browser = /Edg\//.test(userAgent)
    ? 'Edge'
    : /OPR\//.test(userAgent)
      ? 'Opera'
      : /Firefox\//.test(userAgent)
        ? 'Firefox'
        : /Chrom(e|ium)\//.test(userAgent)
          ? 'Chrome'
          : /Safari\//.test(userAgent)
            ? 'Safari'
            : undefined;
  const system = /Android/.test(userAgent)
    ? 'Android'
    : /iPhone|iPad/.test(userAgent)
      ? 'iOS'
      : /Windows/.test(userAgent)
        ? 'Windows'
        : /Mac OS X/.test(userAgent)
          ? 'macOS'
          : /Linux/.test(userAgent)
            ? 'Linux'
            : undefined;
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? userAgent.slice(0, 40);
}

function Sessions() {
  const queryClient = useQueryClient();
  const sessions = useQuery({ queryKey: ['sessions'], queryFn: () => unwrap(api.GET('/api/account/sessions')) });
  const revoke = useMutation({
    mutationFn: (session: { id: string; current: boolean }) => unwrap(api.DELETE('/api/account/sessions/{sessionId}', { params: { path: { sessionId: session.id } } })),
    onSuccess: (_data, session) => {
      if (session.current) {
        queryClient.clear();
        window.location.assign('/login');
        return;
      }
      notifications.show({ color: 'teal', message: 'That device is signed out.' });
      void queryClient.invalidateQueries({ queryKey: ['sessions'] });
    },
  });
  return (
    <Card withBorder aria-labelledby="sessions-title">
      <Stack gap="sm">
        <Title order={2} size="h4" id="sessions-title">
          Signed-in devices
        </Title>
        <Text size="sm" c="dimmed">
          Revoke a device you do not recognise, then change your password.
        </Text>
        {revoke.error && (
          <Alert color="red" role="alert">
            {errorMessage(revoke.error)}
          </Alert>
        )}
        {sessions.isPending ? (
          <LoadingState label="Loading your devices…" />
        ) : sessions.isError ? (
          <ErrorAlert error={sessions.error} onRetry={() => void sessions.refetch()} />
        ) : (
          <Table aria-label="Signed-in devices" verticalSpacing="sm">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Device</Table.Th>
                <Table.Th visibleFrom="sm">Last seen</Table.Th>
                <Table.Th>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {sessions.data.data.map((s) => {
                const device = describeDevice(s.userAgent);
                return (
                  <Table.Tr key={s.id}>
                    <Table.Td title={s.userAgent ?? undefined}>
                      <Text size="sm" fw={500}>
                        {device}
                        {s.current && (
                          <Badge ml="xs" variant="light" size="sm">
                            this device
                          </Badge>
                        )}
                      </Text>
                      <Text size="xs" c="dimmed">
                        {s.ip ?? 'unknown address'} · signed in {formatDateTime(s.createdAt)}
                      </Text>
                    </Table.Td>
                    <Table.Td visibleFrom="sm">{formatDateTime(s.lastSeenAt)}</Table.Td>
                    <Table.Td ta="right">
                      <Button
                        size="compact-sm"
                        variant="subtle"
                        color="red"
                        loading={revoke.isPending && revoke.variables.id === s.id}
                        onClick={() => revoke.mutate(s)}
                        aria-label={s.current ? 'Revoke this device (sign out)' : `Revoke ${device}, signed in ${formatDateTime(s.createdAt)}`}
                      >
                        {s.current ? 'Sign out' : 'Revoke'}
                      </Button>
                    </Table.Td>
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        )}
      </Stack>
    </Card>
  );
}
