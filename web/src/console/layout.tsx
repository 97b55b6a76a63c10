import { Anchor, AppShell, Burger, Button, Group, NavLink, ScrollArea, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Link, Outlet, useRouterState } from '@tanstack/react-router';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { useMe, useSignOut } from '../portal/context';

const NAV = [
  { to: '/console', label: 'Access requests' },
  { to: '/console/organizations', label: 'Organizations' },
  { to: '/console/fundings', label: 'Fundings' },
  { to: '/console/agents', label: 'Field agents' },
  { to: '/console/reviews', label: 'Review queue' },
  { to: '/console/prices', label: 'Prices' },
  { to: '/console/deliveries', label: 'Deliveries' },
  { to: '/console/audit', label: 'Audit log' },
  { to: '/console/access-log', label: 'Access log' },
] as const;

/** The operator console's frame: operators only (the server refuses everyone else too). */
export function ConsoleLayout() {
  const me = useMe();
  const [opened, { toggle, close }] = useDisclosure();
  const path = useRouterState({ select: (state) => state.location.pathname });
  if (me.isPending) return <LoadingState label="Loading the console…" />;
  if (me.isError) return <ErrorAlert error={me.error} onRetry={() => void me.refetch()} />;
  if (!me.data.person.operator) {
    return (
      <EmptyState title="This is the operator console" action={<Anchor href="/">Go to your portal</Anchor>}>
        Your account is not an operator's. The console is for the staff who run this Vouch service; ask them if you need something from it.
      </EmptyState>
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
