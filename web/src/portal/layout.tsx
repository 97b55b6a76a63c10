import { AppShell, Badge, Burger, Button, Group, Menu, NavLink, ScrollArea, SegmentedControl, Select, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { IconUserCircle } from '@tabler/icons-react';
import { Link, Navigate, Outlet, useRouterState } from '@tanstack/react-router';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { PortalProvider, useHasOrg, useMe, usePortalState, useSignOut } from './context';

const NAV = [
  { to: '/', label: 'Get started' },
  { to: '/verifications', label: 'Verifications' },
  { to: '/screenings', label: 'Screenings' },
  { to: '/links', label: 'Verification links' },
  { to: '/billing', label: 'Usage & billing' },
  { to: '/api-keys', label: 'API keys' },
  { to: '/webhooks', label: 'Webhooks' },
  { to: '/verification-flow', label: 'Verification flow' },
  { to: '/sandbox-outbox', label: 'Sandbox outbox' },
  { to: '/api-access', label: 'API access' },
  { to: '/team', label: 'Team' },
  { to: '/account', label: 'Account' },
] as const;

/** The signed-in frame of every portal page: organization, mode, navigation. */
export function PortalLayout() {
  const me = useMe();
  if (me.isPending) return <LoadingState label="Loading your portal…" />;
  if (me.isError) return <ErrorAlert error={me.error} onRetry={() => void me.refetch()} />;
  return (
    <PortalProvider me={me.data}>
      <Shell />
    </PortalProvider>
  );
}

function Shell() {
  const [opened, { toggle, close }] = useDisclosure();
  const hasOrg = useHasOrg();
  const path = useRouterState({ select: (state) => state.location.pathname });
  return (
    <AppShell header={{ height: 60 }} navbar={{ width: 230, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Open navigation" />
            <Text fw={800} size="lg" c="blue.7">
              Vouch
            </Text>
          </Group>
          {hasOrg ? <OrgControls /> : <UserMenu />}
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Portal">
        <AppShell.Section grow component={ScrollArea}>
          {NAV.map((item) => (
            <NavLink
              key={item.to}
              component={Link}
              to={item.to}
              label={item.label}
              active={item.to === '/' ? path === '/' || path === '/get-started' : path.startsWith(item.to)}
              onClick={close}
            />
          ))}
        </AppShell.Section>
        {hasOrg && <OrgSwitcher />}
      </AppShell.Navbar>
      <AppShell.Main>
        {hasOrg ? (
          <>
            <ModeBanner />
            <Outlet />
          </>
        ) : (
          <NoOrganization />
        )}
      </AppShell.Main>
    </AppShell>
  );
}

/**
 * A person in no organization: a field agent goes to their app, an operator is pointed to the
 * console, anyone else to an invitation.
 */
function NoOrganization() {
  const me = useMe();
  if (me.data?.person.fieldAgent) return <Navigate to="/field" replace />;
  if (me.data?.person.operator) {
    return (
      <EmptyState title="You are an operator" action={<Button component={Link} to="/console">Open the operator console</Button>}>
        Your account runs this Vouch service rather than belonging to a customer's organization.
      </EmptyState>
    );
  }
  return (
    <EmptyState title="You are not in an organization">
      Ask an owner or admin of your company's Vouch organization to invite you, then open the link in their email.
    </EmptyState>
  );
}

function OrgControls() {
  const { mode, setMode } = usePortalState();
  return (
    <Group gap="xs" wrap="nowrap">
      {mode === 'test' && (
        <Badge color="orange" variant="filled" size="sm">
          Test data
        </Badge>
      )}
      <SegmentedControl
        aria-label="Mode"
        size="xs"
        value={mode}
        onChange={(value) => setMode(value === 'live' ? 'live' : 'test')}
        data={[
          { value: 'test', label: 'Test' },
          { value: 'live', label: 'Live' },
        ]}
        color={mode === 'test' ? 'orange' : 'blue'}
      />
      <UserMenu />
    </Group>
  );
}

function ModeBanner() {
  const { mode } = usePortalState();
  if (mode !== 'test') return null;
  return (
    <Text size="sm" fw={600} c="orange.9" bg="orange.0" px="sm" py={6} mb="md" style={{ borderRadius: 6 }} role="note">
      Test mode: sandbox data, never charged. Switch to Live in the header for real lookups.
    </Text>
  );
}

function OrgSwitcher() {
  const { me, org, setOrgId } = usePortalState();
  if (me.memberships.length < 2) {
    return (
      <Text size="sm" c="dimmed" p="xs">
        {org.orgName} · {org.role}
      </Text>
    );
  }
  return (
    <Select
      label="Organization"
      p="xs"
      value={org.orgId}
      onChange={(value) => value && setOrgId(value)}
      data={me.memberships.map((m) => ({ value: m.orgId, label: m.orgName }))}
      allowDeselect={false}
    />
  );
}

function UserMenu() {
  const me = useMe();
  const signOut = useSignOut();
  const name = me.data?.person.name ?? 'you';
  return (
    <Menu position="bottom-end">
      <Menu.Target>
        {/* On a phone only the icon shows; the accessible name always carries the person's name. */}
        <Button variant="subtle" size="compact-sm" aria-label={`Account menu for ${name}`} leftSection={<IconUserCircle size={20} aria-hidden />}>
          <Text span inherit visibleFrom="sm">
            {name}
          </Text>
        </Button>
      </Menu.Target>
      <Menu.Dropdown>
        <Menu.Label>{me.data?.person.email}</Menu.Label>
        <Menu.Item component={Link} to="/account">
          Account and security
        </Menu.Item>
        <Menu.Item onClick={() => void signOut()}>Sign out</Menu.Item>
      </Menu.Dropdown>
    </Menu>
  );
}
