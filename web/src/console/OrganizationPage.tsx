import { Anchor, Badge, Box, Button, Card, Group, Image, Modal, SegmentedControl, Select, SimpleGrid, Stack, Table, Text, Textarea, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useState, type ReactNode } from 'react';
import { api, errorMessage, unwrap } from '../api/client';
import type { operations } from '../api/schema';
import { formatDateTime, formatKobo, Money } from '../components/format';
import { Pager } from '../components/layout-parts';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { DataTable } from '../components/table';
import { DataProtectionSection } from './DataProtectionSection';
import { FaceMatchSection } from './FaceMatchSection';
import { NairaInput, nairaToKobo } from './money';

type Detail = operations['consoleGetOrganization']['responses'][200]['content']['application/json'];
type Webhook = Detail['webhooks'][number];
type Signing = NonNullable<Webhook['signing']>;
type Usage = Detail['usage'][number];
type Kind = 'credit' | 'charge' | 'refund' | 'debit';

const LEDGER_PAGE = 20;
/** ₦100,000,000: what the server takes at most in one adjustment. */
const MAX_NAIRA = 100_000_000;
const MAX_REASON = 500;

const KINDS: Record<Kind, { label: string; colour: string }> = {
  credit: { label: 'Credit', colour: 'teal' },
  charge: { label: 'Charge', colour: 'gray' },
  refund: { label: 'Refund', colour: 'blue' },
  debit: { label: 'Debit', colour: 'red' },
};

/** How an endpoint's deliveries are signed (docs/webhooks.md, "Signing"). */
const SIGNINGS: { value: Signing; label: string }[] = [
  { value: 'standard', label: 'Standard Webhooks (webhook-signature)' },
  { value: 'verifyme', label: 'VerifyMe style (x-verifyme-signature)' },
  { value: 'both', label: 'Both' },
];

const WEBHOOK_STATES: Record<Webhook['state'], { label: string; colour: string }> = {
  no_endpoint: { label: 'No URL set', colour: 'gray' },
  idle: { label: 'No deliveries yet', colour: 'gray' },
  healthy: { label: 'Healthy', colour: 'green' },
  failing: { label: 'Failing', colour: 'orange' },
  circuit_open: { label: 'Circuit open', colour: 'red' },
};

/** One organization as an operator looks at it: access, people, secrets, webhooks, usage and money. */
export function OrganizationPage() {
  const { orgId = '' } = useParams({ strict: false }) as { orgId?: string };
  const [adjusting, setAdjusting] = useState(false);
  const detail = useQuery({
    queryKey: ['console', 'organization', orgId],
    queryFn: () => unwrap(api.GET('/api/console/organizations/{orgId}', { params: { path: { orgId } } })),
  });
  const back = (
    <Anchor component={Link} to="/console/organizations" size="sm">
      ← Organizations
    </Anchor>
  );
  if (detail.isPending) return <LoadingState label="Loading the organization…" />;
  if (detail.isError) {
    return (
      <Stack gap="md">
        {back}
        <ErrorAlert error={detail.error} onRetry={() => void detail.refetch()} title="This organization could not be loaded" />
      </Stack>
    );
  }
  const org = detail.data;
  return (
    <Stack gap="lg">
      <Stack gap={4}>
        {back}
        <Group justify="space-between" align="flex-start" wrap="wrap" gap="sm">
          <div>
            <Title order={2} style={{ overflowWrap: 'anywhere' }}>
              {org.name}
            </Title>
            <Text size="sm" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
              {org.id} · since {formatDateTime(org.createdAt)}
              {org.email ? ` · ${org.email}` : ''}
            </Text>
          </div>
          <Button onClick={() => setAdjusting(true)}>Credit or debit</Button>
        </Group>
      </Stack>

      <SimpleGrid cols={{ base: 1, xs: 3 }} spacing="sm">
        <Figure label="Balance" value={<span data-testid="balance">{formatKobo(org.balance)}</span>} />
        <Figure
          label="Live API"
          value={org.access.enabled ? <Badge color="green">{`On · ${org.access.riskLevel} · ${org.access.payloadType}`}</Badge> : <Badge color="gray">Off</Badge>}
        />
        <Figure label="Members" value={org.members.length} />
      </SimpleGrid>

      <Section id="access" title="API access">
        <Stack gap={6}>
          <Text size="sm">
            Live access is <b>{org.access.enabled ? 'on' : 'off'}</b>, risk level <b>{org.access.riskLevel}</b>, payload type <b>{org.access.payloadType}</b>; rate limit{' '}
            {org.access.rateLimitPerMinute === null ? "the server's default" : `${org.access.rateLimitPerMinute} requests a minute per secret`}.
          </Text>
          {org.access.pendingRequest ? (
            <Text size="sm">
              A request is waiting since {formatDateTime(org.access.pendingRequest.createdAt)}: {org.access.pendingRequest.riskLevel} · {org.access.pendingRequest.payloadType}
              {org.access.pendingRequest.useCase ? ` (“${org.access.pendingRequest.useCase}”)` : ''}.{' '}
              <Anchor component={Link} to="/console">
                Review it in Access requests
              </Anchor>
            </Text>
          ) : (
            <Text size="sm" c="dimmed">
              No access request waiting.
            </Text>
          )}
        </Stack>
      </Section>

      <Section id="members" title="Members">
        {org.members.length === 0 ? (
          <EmptyState title="No members">Made with vouch org create: nobody signs in to its portal yet. Its owner can be invited from the command line.</EmptyState>
        ) : (
          <DataTable
            caption="Members"
            rows={org.members}
            rowKey={(row) => row.personId}
            minWidth={560}
            columns={[
              { key: 'name', header: 'Name', cell: (row) => row.name },
              { key: 'email', header: 'Email', cell: (row) => <span style={{ overflowWrap: 'anywhere' }}>{row.email}</span> },
              { key: 'role', header: 'Role', cell: (row) => row.role },
              { key: 'joined', header: 'Joined', cell: (row) => formatDateTime(row.joinedAt) },
            ]}
          />
        )}
      </Section>

      <Section id="secrets" title="API secrets" description="Hints and use only: the secrets themselves are never shown here.">
        {org.secrets.length === 0 ? (
          <EmptyState title="No secrets">This organization has no API secrets.</EmptyState>
        ) : (
          <DataTable
            caption="API secrets"
            rows={org.secrets}
            rowKey={(row) => `${row.mode}-${row.hint}-${row.createdAt}`}
            minWidth={640}
            columns={[
              { key: 'mode', header: 'Mode', cell: (row) => row.mode },
              { key: 'hint', header: 'Secret', cell: (row) => <Text ff="monospace" size="sm">{row.hint}</Text> },
              {
                key: 'status',
                header: 'Status',
                cell: (row) => <Badge color={row.status === 'active' ? 'green' : row.status === 'expiring' ? 'yellow' : 'gray'}>{row.status === 'expiring' ? 'rolled, still working' : row.status}</Badge>,
              },
              { key: 'created', header: 'Created', cell: (row) => formatDateTime(row.createdAt) },
              { key: 'used', header: 'Last used', cell: (row) => (row.lastUsedAt ? formatDateTime(row.lastUsedAt) : 'Never') },
              { key: 'revoked', header: 'Stops / stopped', cell: (row) => formatDateTime(row.revokedAt) },
            ]}
          />
        )}
      </Section>

      <Section id="webhooks" title="Webhooks">
        <SimpleGrid cols={{ base: 1, md: 2 }} spacing="sm">
          {org.webhooks.map((webhook) => (
            <WebhookCard key={webhook.mode} orgId={org.id} webhook={webhook} />
          ))}
        </SimpleGrid>
      </Section>

      <BrandingSection orgId={org.id} />

      <Section id="usage" title="Usage in the last 30 days">
        <SimpleGrid cols={{ base: 1, md: 2 }} spacing="sm">
          {org.usage.map((usage) => (
            <UsageTable key={usage.mode} usage={usage} />
          ))}
        </SimpleGrid>
      </Section>

      <LedgerSection orgId={org.id} balance={org.balance} />

      <DataProtectionSection orgId={org.id} name={org.name} />

      <FaceMatchSection orgId={org.id} name={org.name} />

      {adjusting && <AdjustModal orgId={org.id} name={org.name} balance={org.balance} onClose={() => setAdjusting(false)} />}
    </Stack>
  );
}

/** The organization's verification-flow branding, as its owners set it in the portal; read-only here. */
function BrandingSection({ orgId }: { orgId: string }) {
  const branding = useQuery({
    queryKey: ['console', 'organization', orgId, 'branding'],
    queryFn: () => unwrap(api.GET('/api/console/organizations/{orgId}/branding', { params: { path: { orgId } } })),
  });
  return (
    <Section id="branding" title="Verification flow branding" description="What people see on the organization's hosted verification pages; its owners and admins change it in the portal.">
      {branding.isPending ? (
        <LoadingState label="Loading the branding…" />
      ) : branding.isError ? (
        <ErrorAlert error={branding.error} onRetry={() => void branding.refetch()} />
      ) : (
        <Group align="flex-start" gap="lg" wrap="wrap">
          {branding.data.logo && (
            <Box p="xs" style={{ border: '1px solid var(--mantine-color-gray-3)', borderRadius: 4 }}>
              <Image src={branding.data.logo.url} alt={`Logo of ${branding.data.displayName}`} h={48} w="auto" fit="contain" />
            </Box>
          )}
          <Table aria-label="Branding" variant="vertical" withTableBorder={false} style={{ flex: '1 1 260px', minWidth: 0 }}>
            <Table.Tbody>
              <Table.Tr>
                <Table.Th w={150}>Display name</Table.Th>
                <Table.Td>
                  {branding.data.displayName}
                  {!branding.data.displayNameSet && (
                    <Text span size="xs" c="dimmed">
                      {' '}
                      (the organization's name)
                    </Text>
                  )}
                </Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>Colour</Table.Th>
                <Table.Td>
                  {branding.data.colour ? (
                    <Group gap={6} wrap="nowrap">
                      <Box w={16} h={16} style={{ background: branding.data.colour, borderRadius: 3, border: '1px solid var(--mantine-color-gray-4)' }} aria-hidden />
                      <Text size="sm" ff="monospace">
                        {branding.data.colour}
                      </Text>
                    </Group>
                  ) : (
                    "Vouch's own"
                  )}
                </Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>Logo</Table.Th>
                <Table.Td>{branding.data.logo ? `Set (${branding.data.logo.width}×${branding.data.logo.height}, ${Math.ceil(branding.data.logo.size / 1024)} KB)` : 'None'}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>Default redirect</Table.Th>
                <Table.Td style={{ overflowWrap: 'anywhere' }}>{branding.data.defaultRedirectUrl ?? 'None'}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>Allowed origins</Table.Th>
                <Table.Td style={{ overflowWrap: 'anywhere' }}>{branding.data.allowedOrigins.length > 0 ? branding.data.allowedOrigins.join(', ') : 'Any origin the SDK names'}</Table.Td>
              </Table.Tr>
              <Table.Tr>
                <Table.Th>Last changed</Table.Th>
                <Table.Td>{branding.data.updatedAt ? formatDateTime(branding.data.updatedAt) : 'Never'}</Table.Td>
              </Table.Tr>
            </Table.Tbody>
          </Table>
        </Group>
      )}
    </Section>
  );
}

function Figure({ label, value }: { label: string; value: ReactNode }) {
  return (
    <Card withBorder padding="sm">
      <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
        {label}
      </Text>
      <Text fw={700} size="lg" component="div">
        {value}
      </Text>
    </Card>
  );
}

function Section({ id, title, description, children, actions }: { id: string; title: string; description?: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <Card withBorder component="section" aria-labelledby={`${id}-title`}>
      <Stack gap="sm">
        <Group justify="space-between" wrap="wrap" gap="xs">
          <div>
            <Title order={3} size="h4" id={`${id}-title`}>
              {title}
            </Title>
            {description && (
              <Text size="sm" c="dimmed">
                {description}
              </Text>
            )}
          </div>
          {actions}
        </Group>
        {children}
      </Stack>
    </Card>
  );
}

function WebhookCard({ orgId, webhook }: { orgId: string; webhook: Webhook }) {
  const state = WEBHOOK_STATES[webhook.state];
  const queryClient = useQueryClient();
  const setSigning = useMutation({
    mutationFn: (signing: Signing) =>
      unwrap(api.PUT('/api/console/organizations/{orgId}/webhooks/{mode}/signing', { params: { path: { orgId, mode: webhook.mode } }, body: { signing } })),
    onSuccess: async (changed) => {
      notifications.show({ color: 'teal', message: `The ${webhook.mode} webhook is now signed: ${SIGNINGS.find((s) => s.value === changed.signing)?.label}` });
      await queryClient.invalidateQueries({ queryKey: ['console', 'organization', orgId] });
    },
  });
  return (
    <Card withBorder padding="sm" aria-label={`${webhook.mode} webhook`}>
      <Stack gap={4}>
        <Group justify="space-between" wrap="nowrap">
          <Text fw={700} tt="capitalize">
            {webhook.mode}
          </Text>
          <Badge color={state.colour}>{state.label}</Badge>
        </Group>
        <Text size="sm" ff="monospace" style={{ overflowWrap: 'anywhere' }}>
          {webhook.url ?? 'No URL set'}
        </Text>
        {webhook.signing && (
          <Select
            size="xs"
            label="Signature headers"
            description="Changed for the next attempt of every delivery; written to the audit log"
            data={SIGNINGS}
            value={webhook.signing}
            onChange={(value) => value && value !== webhook.signing && setSigning.mutate(value as Signing)}
            allowDeselect={false}
            disabled={setSigning.isPending}
            error={setSigning.error ? errorMessage(setSigning.error) : undefined}
          />
        )}
        {webhook.failingSince && (
          <Text size="sm" c="red.8">
            Failing since {formatDateTime(webhook.failingSince)} ({webhook.consecutiveFailures} failed {webhook.consecutiveFailures === 1 ? 'attempt' : 'attempts'} in a row)
          </Text>
        )}
        {webhook.circuit && (
          <Text size="sm" c="red.8">
            Deliveries held: the next one goes as a probe at {formatDateTime(webhook.circuit.probeAt)}.
          </Text>
        )}
        <Text size="sm">Last success: {webhook.lastSuccessAt ? formatDateTime(webhook.lastSuccessAt) : 'none'}</Text>
        <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
          Last failure:{' '}
          {webhook.lastFailure
            ? `${formatDateTime(webhook.lastFailure.at)}, ${webhook.lastFailure.statusCode === null ? 'no answer' : `HTTP ${webhook.lastFailure.statusCode}`}${webhook.lastFailure.error ? ` (${webhook.lastFailure.error})` : ''}`
            : 'none'}
        </Text>
        <Text size="sm">
          Backlog: {webhook.backlog.toLocaleString('en-NG')}
          {webhook.backlogCapped ? '+' : ''} waiting{webhook.oldestPendingAt ? `, oldest from ${formatDateTime(webhook.oldestPendingAt)}` : ''}
        </Text>
      </Stack>
    </Card>
  );
}

function UsageTable({ usage }: { usage: Usage }) {
  const title = `${usage.mode === 'live' ? 'Live' : 'Test'} checks`;
  return (
    <Card withBorder padding="sm">
      <Text fw={700} mb={4}>
        {title}
      </Text>
      {usage.total.count === 0 ? (
        <Text size="sm" c="dimmed">
          No {usage.mode} checks in these 30 days.
        </Text>
      ) : (
        <Table aria-label={title} verticalSpacing={4}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Check</Table.Th>
              <Table.Th ta="right">Count</Table.Th>
              <Table.Th ta="right">Spend</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {usage.types.map((type) => (
              <Table.Tr key={type.type}>
                <Table.Td>{type.label}</Table.Td>
                <Table.Td ta="right">{type.count.toLocaleString('en-NG')}</Table.Td>
                <Table.Td ta="right">{formatKobo(type.amount)}</Table.Td>
              </Table.Tr>
            ))}
            <Table.Tr fw={700}>
              <Table.Td>Total</Table.Td>
              <Table.Td ta="right">{usage.total.count.toLocaleString('en-NG')}</Table.Td>
              <Table.Td ta="right">{formatKobo(usage.total.amount)}</Table.Td>
            </Table.Tr>
          </Table.Tbody>
        </Table>
      )}
    </Card>
  );
}

/** The wallet's ledger with who made each money action; CSV of the same. */
function LedgerSection({ orgId, balance }: { orgId: string; balance: number }) {
  const [kind, setKind] = useState<Kind | 'all'>('all');
  const [offset, setOffset] = useState(0);
  const ledger = useQuery({
    queryKey: ['console', 'organization', orgId, 'ledger', kind, offset],
    queryFn: () =>
      unwrap(api.GET('/api/console/organizations/{orgId}/ledger', { params: { path: { orgId }, query: { ...(kind === 'all' ? {} : { kind }), limit: LEDGER_PAGE, offset } } })),
    placeholderData: keepPreviousData,
  });
  const csv = `/api/console/organizations/${orgId}/ledger.csv${kind === 'all' ? '' : `?kind=${kind}`}`;
  return (
    <Section
      id="ledger"
      title="Ledger"
      description={`Balance ${formatKobo(balance)}. Every change to the wallet, newest first, with the operator of each money action.`}
      actions={
        <Button component="a" href={csv} download variant="default" size="sm">
          Download CSV
        </Button>
      }
    >
      <SegmentedControl
        aria-label="Kind of entry"
        size="xs"
        value={kind}
        onChange={(value) => {
          setKind(value as Kind | 'all');
          setOffset(0);
        }}
        data={[
          { value: 'all', label: 'All' },
          { value: 'credit', label: 'Credits' },
          { value: 'debit', label: 'Debits' },
          { value: 'charge', label: 'Charges' },
          { value: 'refund', label: 'Refunds' },
        ]}
      />
      {ledger.isPending ? (
        <LoadingState label="Loading the ledger…" />
      ) : ledger.isError ? (
        <ErrorAlert error={ledger.error} onRetry={() => void ledger.refetch()} />
      ) : ledger.data.total === 0 ? (
        <EmptyState title={kind === 'all' ? 'No ledger entries' : 'No entries of this kind'}>
          {kind === 'all' ? 'Fundings, charges, refunds, credits and debits appear here. Credit the wallet to start.' : 'Choose All to see every entry.'}
        </EmptyState>
      ) : (
        <>
          <DataTable
            caption="Ledger"
            rows={ledger.data.data}
            rowKey={(row) => String(row.id)}
            minWidth={760}
            columns={[
              { key: 'when', header: 'Date', cell: (row) => <span style={{ whiteSpace: 'nowrap' }}>{formatDateTime(row.createdAt)}</span> },
              {
                key: 'kind',
                header: 'Kind',
                cell: (row) => (
                  <Badge variant="light" color={KINDS[row.kind].colour}>
                    {KINDS[row.kind].label}
                  </Badge>
                ),
              },
              { key: 'description', header: 'Description', cell: (row) => <span style={{ overflowWrap: 'anywhere' }}>{row.description}</span> },
              { key: 'amount', header: 'Amount', align: 'right', cell: (row) => <Money kobo={row.amount} signed /> },
              { key: 'balance', header: 'Balance after', align: 'right', cell: (row) => <Money kobo={row.balanceAfter} /> },
              { key: 'operator', header: 'Operator', cell: (row) => (row.operator ? <span title={row.operator.email}>{row.operator.name || row.operator.email}</span> : '—') },
            ]}
          />
          <Pager offset={offset} limit={LEDGER_PAGE} total={ledger.data.total} onChange={setOffset} />
        </>
      )}
    </Section>
  );
}

/** Credit or debit the wallet: direction, amount in naira (kobo shown), and the reason the customer will read. */
function AdjustModal({ orgId, name, balance, onClose }: { orgId: string; name: string; balance: number; onClose(): void }) {
  const queryClient = useQueryClient();
  const [direction, setDirection] = useState<'credit' | 'debit'>('credit');
  const [amount, setAmount] = useState<string | number>('');
  const [reason, setReason] = useState('');
  const [errors, setErrors] = useState<{ amount?: string; reason?: string }>({});
  const kobo = nairaToKobo(amount);
  const adjust = useMutation({
    mutationFn: (body: { direction: 'credit' | 'debit'; amount: number; reason: string }) =>
      unwrap(api.POST('/api/console/organizations/{orgId}/adjustments', { params: { path: { orgId } }, body })),
    onSuccess: async (done, body) => {
      notifications.show({
        color: 'green',
        message: `${body.direction === 'credit' ? 'Credited' : 'Debited'} ${formatKobo(body.amount)} ${body.direction === 'credit' ? 'to' : 'from'} ${name}: the balance is ${formatKobo(done.balance)}`,
      });
      await queryClient.invalidateQueries({ queryKey: ['console'] });
      onClose();
    },
  });
  const submit = () => {
    const found: { amount?: string; reason?: string } = {};
    if (kobo === undefined || kobo < 1) found.amount = 'Enter an amount of at least ₦0.01';
    else if (kobo > MAX_NAIRA * 100) found.amount = `At most ${formatKobo(MAX_NAIRA * 100)} at a time`;
    else if (direction === 'debit' && kobo > balance) found.amount = `The wallet holds ${formatKobo(balance)}: a debit may not take it below zero`;
    if (!reason.trim()) found.reason = 'Say why: the audit log keeps it and the customer reads it in their ledger';
    setErrors(found);
    if (found.amount || found.reason || kobo === undefined) return;
    adjust.mutate({ direction, amount: kobo, reason: reason.trim() });
  };
  return (
    <Modal opened onClose={onClose} title={`Credit or debit the wallet of ${name}`}>
      <Stack gap="sm">
        <Text size="sm">The wallet holds {formatKobo(balance)}.</Text>
        <SegmentedControl
          aria-label="Direction"
          value={direction}
          onChange={(value) => setDirection(value === 'debit' ? 'debit' : 'credit')}
          data={[
            { value: 'credit', label: 'Credit (add money)' },
            { value: 'debit', label: 'Debit (take money off)' },
          ]}
          fullWidth
        />
        <NairaInput label="Amount" value={amount} onChange={setAmount} error={errors.amount} max={MAX_NAIRA} autoFocus />
        <Textarea
          label="Reason"
          description="Shown to the customer in their ledger and mailed to the owners; kept in the audit log."
          value={reason}
          onChange={(event) => setReason(event.currentTarget.value)}
          error={errors.reason}
          maxLength={MAX_REASON}
          autosize
          minRows={2}
        />
        {adjust.error && (
          <Text c="red" size="sm" role="alert">
            {errorMessage(adjust.error)}
          </Text>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose} disabled={adjust.isPending}>
            Cancel
          </Button>
          <Button color={direction === 'debit' ? 'red' : 'blue'} onClick={submit} loading={adjust.isPending} disabled={adjust.isPending}>
            {kobo && kobo > 0 ? `${direction === 'credit' ? 'Credit' : 'Debit'} ${formatKobo(kobo)}` : direction === 'credit' ? 'Credit' : 'Debit'}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
