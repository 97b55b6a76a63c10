import { Anchor, AppShell, Burger, Button, Container, Group, NavLink, ScrollArea, Stack, Text, Title } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Link, Outlet, useRouterState } from '@tanstack/react-router';
import { useState } from 'react';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { TwoFactor } from '../portal/account/TwoFactor';
import { useMe, useSignOut } from '../portal/context';

const NAV = [
  { to: '/console', label: 'Access requests' },
  { to: '/console/organizations', label: 'Organizations' },
  { to: '/console/fundings', label: 'Fundings' },
  { to: '/console/agents', label: 'Field agents' },
  { to: '/console/reviews', label: 'Review queue' },
  { to: '/console/prices', label: 'Prices' },
  { to: '/console/sessions', label: 'Sessions' },
  { to: '/console/watchlists', label: 'Watchlists' },
  { to: '/console/deliveries', label: 'Deliveries' },
  { to: '/console/audit', label: 'Audit log' },
  { to: '/console/access-log', label: 'Access log' },
] as const;

/** The operator console's frame: operators only (the server refuses everyone else too). */
export function ConsoleLayout() {
  const me = useMe();
  const [opened, { toggle, close }] = useDisclosure();
  const path = useRouterState({ select: (state) => state.location.pathname });
  const [gated, setGated] = useState(false);
  const [codesKept, setCodesKept] = useState(false);
  if (me.isPending) return <LoadingState label="Loading the console…" />;
  if (me.isError) return <ErrorAlert error={me.error} onRetry={() => void me.refetch()} />;
  if (!me.data.person.operator) {
    return (
      <EmptyState title="This is the operator console" action={<Anchor href="/">Go to your portal</Anchor>}>
        Your account is not an operator's. The console is for the staff who run this Vouch service; ask them if you need something from it.
      </EmptyState>
    );
  }
  // Until two-factor is on the server refuses every console call (403): the setup is the console's
  // first page, and stays until its recovery codes are put away.
  if (!me.data.person.totpEnabled && !gated) setGated(true);
  if (!me.data.person.totpEnabled || (gated && !codesKept)) {
    return (
      <Container size="sm" py="xl">
        <Stack>
          <Title order={1} size="h2">
            Set up two-factor authentication first
          </Title>
          <Text>
            The console moves customers' money, so operators use it only with two-factor authentication on. It takes a minute with an authenticator app on your phone.
          </Text>
          <TwoFactor onRecoveryCodesKept={() => setCodesKept(true)} />
        </Stack>
      </Container>
    );
  }
  return (
    <AppShell header={{ height: 60 }} navbar={{ width: 230, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Open navigation" />
            <Text fw={800} size="lg" c="grape.7">
              Vouch console
            </Text>
          </Group>
          <SignOut name={me.data.person.name} />
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Console">
        <AppShell.Section grow component={ScrollArea}>
          {NAV.map((item) => (
            <NavLink key={item.to} component={Link} to={item.to} activeOptions={{ exact: true }} label={item.label} active={path === item.to || path === `${item.to}/`} onClick={close} />
          ))}
        </AppShell.Section>
      </AppShell.Navbar>
      <AppShell.Main>
        <Outlet />
      </AppShell.Main>
    </AppShell>
  );
}

function SignOut({ name }: { name: string }) {
  const signOut = useSignOut('/login?next=%2Fconsole');
  return (
    <Group gap="xs" wrap="nowrap">
      <Text size="sm" visibleFrom="sm">
        {name}
      </Text>
      <Button variant="subtle" size="compact-sm" onClick={() => void signOut()}>
        Sign out
      </Button>
    </Group>
  );
}
