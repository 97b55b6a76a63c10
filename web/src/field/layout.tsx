import { Anchor, AppShell, Badge, Box, Button, Container, Group, Text } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { Link, Outlet } from '@tanstack/react-router';
import { useEffect, useSyncExternalStore } from 'react';
import { ApiRequestError } from '../api/client';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { useSignOut } from '../portal/context';
import { notifications } from '@mantine/notifications';
import { forgetFieldCache, useFieldMe, type ReportAnswer } from './api';
import { onReportSent, sentFromForm, startOutbox, useOutbox } from './outbox';

/** The field app's manifest and worker: installable, and its shell opens without a connection. */
function useInstallable(): void {
  useEffect(() => {
    const link = document.querySelector<HTMLLinkElement>('link[rel="manifest"]');
    const previous = link?.getAttribute('href');
    link?.setAttribute('href', '/field.webmanifest');
    const title = document.title;
    document.title = 'Vouch Field';
    if (import.meta.env.PROD && 'serviceWorker' in navigator) {
      navigator.serviceWorker.register('/field-sw.js', { scope: '/field' }).catch(() => undefined);
    }
    return () => {
      if (previous) link?.setAttribute('href', previous);
      document.title = title;
    };
  }, []);
}

function subscribeOnline(callback: () => void): () => void {
  window.addEventListener('online', callback);
  window.addEventListener('offline', callback);
  return () => {
    window.removeEventListener('online', callback);
    window.removeEventListener('offline', callback);
  };
}

export function useOnline(): boolean {
  return useSyncExternalStore(subscribeOnline, () => navigator.onLine);
}

/** The field app's frame at /field: phone first, for active field agents (the server refuses everyone else too). */
export function FieldLayout() {
  useInstallable();
  const me = useFieldMe();
  const online = useOnline();
  const outbox = useOutbox();
  const queryClient = useQueryClient();
  useEffect(() => {
    startOutbox();
    return onReportSent((entry, answer) => {
      void queryClient.invalidateQueries({ queryKey: ['field', 'tasks'] });
      // A report sent from the queue (the form that made it may be long closed) says so.
      if (!sentFromForm.has(entry.key)) {
        const held = (answer as Partial<ReportAnswer>).heldForReview;
        notifications.show({ color: held ? 'yellow' : 'teal', title: held ? 'Queued report sent — held for review' : 'Queued report sent', message: entry.label });
      }
    });
  }, [queryClient]);

  if (me.isPending) return <LoadingState label="Loading your tasks…" />;
  if (me.isError) {
    const error = me.error;
    if (error instanceof ApiRequestError && error.status === 403) {
      return (
        <Container size="xs" py="xl">
          <EmptyState title="This is the field app" action={<Anchor href="/">Go to the Vouch portal</Anchor>}>
            {error.message}. The field app is for the agents who visit addresses and businesses; your operations team gives you an account.
          </EmptyState>
        </Container>
      );
    }
    return (
      <Container size="xs" py="xl">
        <ErrorAlert error={error} onRetry={() => void me.refetch()} title="The field app could not start" />
      </Container>
    );
  }
  const waiting = outbox.filter((entry) => entry.status === 'queued').length;
  return (
    <AppShell header={{ height: 56 }} padding="sm">
      <AppShell.Header>
        <Group h="100%" px="sm" justify="space-between" wrap="nowrap">
          <Anchor component={Link} to="/field" underline="never" c="inherit">
            <Text fw={800} size="lg" c="teal.8">
              Vouch Field
            </Text>
          </Anchor>
          <Group gap={6} wrap="nowrap">
            {!online && (
              <Badge color="orange" variant="filled" role="status">
                Offline
              </Badge>
            )}
            {waiting > 0 && (
              <Badge color="yellow" variant="light">
                {waiting} queued
              </Badge>
            )}
            <SignOut />
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Main>
        <Box maw={640} mx="auto">
          {me.data.savedAt && (
            <Text size="xs" c="dimmed" mb="xs">
              Signed in as {me.data.name} (offline copy)
            </Text>
          )}
          <Outlet />
        </Box>
      </AppShell.Main>
    </AppShell>
  );
}

function SignOut() {
  const signOut = useSignOut('/login?next=%2Ffield');
  const outbox = useOutbox();
  return (
    <Button
      variant="subtle"
      size="compact-sm"
      onClick={() => {
        // Reports still waiting stay on the phone (the next sign-in sends them); the cached tasks do not.
        if (outbox.length > 0 && !window.confirm('Reports are still waiting to be sent. They stay on this phone and are sent after you sign in again. Sign out?')) return;
        forgetFieldCache();
        void signOut();
      }}
    >
      Sign out
    </Button>
  );
}
