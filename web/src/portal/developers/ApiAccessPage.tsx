import { Alert, Anchor, Badge, Button, Card, Group, Select, SimpleGrid, Stack, Table, Text, Textarea, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../../api/client';
import { formatDateTime, StatusBadge } from '../../components/format';
import { PageHeader } from '../../components/layout-parts';
import { EmptyState, ErrorAlert, LoadingState } from '../../components/states';
import { fieldError, formError } from '../auth/form-errors';
import { useCurrentOrg, usePortalState } from '../context';
import { keys, useAccess } from './queries';
import { PAYLOAD_TYPES, RISK_LEVELS, type Access, type AccessRequest, type PayloadType, type RiskLevel } from './types';

export function ApiAccessPage() {
  const { orgId, orgName, can } = useCurrentOrg();
  const access = useAccess(orgId);

  if (access.isPending) return <LoadingState label="Loading your API access…" />;
  if (access.isError) return <ErrorAlert error={access.error} onRetry={() => void access.refetch()} />;
  const { requests } = access.data;
  const pending = requests.find((r) => r.status === 'pending');
  return (
    <Stack gap="lg">
      <PageHeader
        title="API access"
        description={`Live requests of ${orgName} need an account manager’s approval of a risk level and an identity payload type. Test mode works without it.`}
      />
      <StatusCard access={access.data} />
      {pending ? (
        <Alert color="yellow" title="Your request is with an account manager" role="status">
          You asked on {formatDateTime(pending.createdAt)} for risk level <b>{pending.riskLevel}</b> and payload type <b>{pending.payloadType}</b>. We will email you when
          it is decided; this page shows the outcome too.
        </Alert>
      ) : can('access.request') ? (
        <RequestForm access={access.data} />
      ) : (
        <Alert color="gray" role="note">
          Only owners and admins of {orgName} ask for live access: ask one of them.
        </Alert>
      )}
      <Explained />
      <History requests={requests} />
    </Stack>
  );
}

function StatusCard({ access }: { access: Access }) {
  const latest = access.requests[0];
  const badge = access.enabled
    ? { color: 'teal', text: 'Enabled' }
    : latest?.status === 'pending'
      ? { color: 'yellow', text: 'Pending approval' }
      : latest?.status === 'declined'
        ? { color: 'red', text: 'Declined' }
        : { color: 'gray', text: 'Not enabled' };
  return (
    <Card withBorder component="section" aria-labelledby="access-status">
      <Group justify="space-between" align="flex-start" wrap="wrap" gap="sm">
        <Stack gap={4} maw={620}>
          <Title order={2} size="h4" id="access-status">
            Live API access
          </Title>
          {access.enabled ? (
            <Text size="sm">
              In force: risk level <b>{access.riskLevel}</b> ({RISK_LEVELS.find((l) => l.value === access.riskLevel)?.fields} compared) and payload type{' '}
              <b>{access.payloadType}</b>. Your live secret works; live checks are charged to the <Anchor component={Link} to="/billing" inherit>wallet</Anchor>.
            </Text>
          ) : latest?.status === 'declined' ? (
            <Text size="sm">
              Your last request was declined on {formatDateTime(latest.decidedAt)}: <b>{latest.declineReason}</b>. Live secrets answer 403 until a request is approved.
            </Text>
          ) : (
            <Text size="sm">Not enabled yet: live secrets answer 403 until an account manager approves a request. Test secrets work meanwhile.</Text>
          )}
        </Stack>
        <Badge size="lg" color={badge.color}>
          {badge.text}
        </Badge>
      </Group>
    </Card>
  );
}

function RequestForm({ access }: { access: Access }) {
  const { orgId } = useCurrentOrg();
  const { me } = usePortalState();
  const queryClient = useQueryClient();
  const [riskLevel, setRiskLevel] = useState<RiskLevel>(access.enabled ? access.riskLevel : 'LOW');
  const [payloadType, setPayloadType] = useState<PayloadType>(access.enabled ? access.payloadType : 'FULL');
  const [useCase, setUseCase] = useState('');
  const ask = useMutation({
    mutationFn: () =>
      unwrap(api.POST('/api/orgs/{orgId}/access-requests', { params: { path: { orgId } }, body: { riskLevel, payloadType, useCase: useCase.trim() || undefined } })),
    onSuccess: () => {
      setUseCase('');
      return queryClient.invalidateQueries({ queryKey: keys.access(orgId) });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    ask.mutate();
  };
  const general = formError(ask.error, ['riskLevel', 'payloadType', 'useCase']);
  const unverified = !me.person.emailVerified;
  return (
    <Card withBorder component="form" noValidate onSubmit={submit} aria-labelledby="access-form">
      <Stack>
        <Title order={2} size="h4" id="access-form">
          {access.enabled ? 'Ask for different values' : 'Request live access'}
        </Title>
        {unverified && (
          <Alert color="yellow" role="note">
            Verify your email first: open the link we mailed to {me.person.email}, or send a new one from <Anchor component={Link} to="/get-started">Get started</Anchor>.
          </Alert>
        )}
        {general && (
          <Alert color="red" role="alert" title="The request was not sent">
            {general}
          </Alert>
        )}
        <SimpleGrid cols={{ base: 1, sm: 2 }}>
          <Select
            label="Risk level"
            description="Which applicant details every check sends, for Vouch to compare with the record"
            data={RISK_LEVELS.map((l) => ({ value: l.value, label: `${l.value}: ${l.fields}` }))}
            value={riskLevel}
            onChange={(value) => value && setRiskLevel(value as RiskLevel)}
            allowDeselect={false}
            error={fieldError(ask.error, 'riskLevel')}
          />
          <Select
            label="Identity payload type"
            description="How much of a NIN record your lookups receive"
            data={PAYLOAD_TYPES.map((p) => ({ value: p.value, label: `${p.value}: ${p.value === 'FULL' ? 'the full NIN data set' : 'without phone and photo'}` }))}
            value={payloadType}
            onChange={(value) => value && setPayloadType(value as PayloadType)}
            allowDeselect={false}
            error={fieldError(ask.error, 'payloadType')}
          />
        </SimpleGrid>
        <Textarea
          label="What you will use Vouch for (optional)"
          description="For example “onboarding loan applicants”: it helps the account manager decide faster"
          value={useCase}
          onChange={(e) => setUseCase(e.currentTarget.value)}
          autosize
          minRows={2}
          maxLength={1000}
          error={fieldError(ask.error, 'useCase')}
        />
        <Group>
          <Button type="submit" loading={ask.isPending} disabled={unverified}>
            Send the request
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}

/** The spec's two tables, in words for the person choosing. */
function Explained() {
  return (
    <Card withBorder component="section" aria-labelledby="access-explained">
      <Stack gap="sm">
        <Title order={2} size="h4" id="access-explained">
          What the values mean
        </Title>
        <Table aria-label="Risk levels" verticalSpacing="xs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Risk level</Table.Th>
              <Table.Th>Applicant fields verified</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {RISK_LEVELS.map((level) => (
              <Table.Tr key={level.value}>
                <Table.Td fw={600} style={{ verticalAlign: 'top' }}>
                  {level.value}
                </Table.Td>
                <Table.Td>
                  {level.fields}
                  <Text size="xs" c="dimmed">
                    {level.meaning}
                  </Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
        <Text size="sm" c="dimmed">
          Address and guarantor verifications need at least LOW. A request missing a field its level requires answers an error.
        </Text>
        <Table aria-label="Identity payload types" verticalSpacing="xs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Payload type</Table.Th>
              <Table.Th>Meaning</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {PAYLOAD_TYPES.map((type) => (
              <Table.Tr key={type.value}>
                <Table.Td fw={600}>{type.value}</Table.Td>
                <Table.Td>{type.meaning}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Stack>
    </Card>
  );
}

function History({ requests }: { requests: AccessRequest[] }) {
  return (
    <Stack gap="xs" component="section" aria-labelledby="access-history">
      <Title order={2} size="h4" id="access-history">
        Requests
      </Title>
      {requests.length === 0 ? (
        <EmptyState title="No requests yet">Your organization has not asked for live access. Send the form above when you are ready to go live.</EmptyState>
      ) : (
        <Table aria-label="Access requests" striped verticalSpacing="xs">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Asked for</Table.Th>
              <Table.Th>Outcome</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {requests.map((r) => (
              <Table.Tr key={r.id}>
                <Table.Td style={{ verticalAlign: 'top' }}>
                  <Text size="sm" fw={600}>
                    {r.riskLevel} / {r.payloadType}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {formatDateTime(r.createdAt)}
                  </Text>
                  {r.useCase && (
                    <Text size="xs" c="dimmed" lineClamp={2}>
                      {r.useCase}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td style={{ verticalAlign: 'top' }}>
                  <StatusBadge status={r.status} />
                  <Text size="sm" mt={4}>
                    {r.status === 'approved'
                      ? `Approved ${formatDateTime(r.decidedAt)} with ${r.decidedRiskLevel} / ${r.decidedPayloadType}`
                      : r.status === 'declined'
                        ? `Declined ${formatDateTime(r.decidedAt)}: ${r.declineReason}`
                        : 'Waiting for an account manager'}
                  </Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}
