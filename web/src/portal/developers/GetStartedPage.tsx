import { Alert, Anchor, Badge, Button, Code, Group, List, Paper, Stack, Text, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { api, errorMessage, unwrap } from '../../api/client';
import { CopyField, PageHeader } from '../../components/layout-parts';
import { ErrorAlert, LoadingState } from '../../components/states';
import { useCurrentOrg, usePortalState } from '../context';
import { useAccess, useEndpoint, useKeys } from './queries';

/** The sandbox's BVN identity (src/identities/registry/test-identities.ts; docs/test-mode.md lists it). */
const TEST_BVN = { number: '22345678901', firstname: 'Adaeze', lastname: 'Okonkwo', dob: '14-03-1990' };

function curlExamples(base: string, secret: string) {
  const auth = `  -H 'Authorization: Bearer ${secret}' \\\n  -H 'Content-Type: application/json' \\\n`;
  const bvn =
    `curl -X POST '${base}/v1/verifications/identities/bvn/${TEST_BVN.number}' \\\n` +
    auth +
    `  -d '{"firstname":"${TEST_BVN.firstname}","lastname":"${TEST_BVN.lastname}","dob":"${TEST_BVN.dob}"}'`;
  const address =
    `curl -X POST '${base}/v1/verifications/addresses' \\\n` +
    auth +
    `  -d '{"street":"12 Admiralty Way","lga":"Eti-Osa","state":"Lagos",` +
    `"applicant":{"firstname":"${TEST_BVN.firstname}","lastname":"${TEST_BVN.lastname}","idType":"BVN","idNumber":"${TEST_BVN.number}"}}'`;
  const complete =
    `curl -X POST '${base}/v1/test-helpers/addresses/ADDRESS_ID/complete' \\\n` + auth + `  -d '{"outcome":"verified"}'`;
  return { bvn, address, complete };
}

export function GetStartedPage() {
  const { orgId, orgName, can } = useCurrentOrg();
  const { me } = usePortalState();
  const keys = useKeys(orgId);
  const access = useAccess(orgId);
  const endpoint = useEndpoint(orgId, 'test');
  const testKey = keys.data?.data.find((k) => k.mode === 'test');
  const testSecret = testKey?.value ?? null;
  const curl = curlExamples(window.location.origin, testSecret ?? '$VOUCH_TEST_SECRET');

  return (
    <Stack gap="lg">
      <PageHeader title="Get started" description={`From the sandbox to live verifications for ${orgName}, in four steps.`} />
      {!me.person.emailVerified && <VerifyEmail email={me.person.email} />}

      <Step number={1} title="Your test secret">
        {keys.isPending ? (
          <LoadingState label="Loading your test secret…" />
        ) : keys.isError ? (
          <ErrorAlert error={keys.error} onRetry={() => void keys.refetch()} />
        ) : testSecret ? (
          <CopyField label="Test secret" value={testSecret} description="Sandbox only: the fixed test identities, never charged. Keep it on your server, out of browsers and apps." />
        ) : (
          <Text size="sm">
            Your role does not show secrets: ask a developer, admin or owner of {orgName} for the test secret. The examples below read it from{' '}
            <Code>$VOUCH_TEST_SECRET</Code>.
          </Text>
        )}
      </Step>

      <Step number={2} title="Make a sandbox call" done={!!testKey?.lastUsedAt}>
        <Text size="sm">
          Look up the test BVN (its holder is {TEST_BVN.firstname} {TEST_BVN.lastname}), then ask for an address verification. Paste them in a terminal; every request and answer is
          in the <Anchor href="/docs">API reference</Anchor>.
        </Text>
        <CopyField label="BVN lookup (curl)" value={curl.bvn} multiline />
        <CopyField label="Address verification (curl)" value={curl.address} multiline />
        {access.data?.riskLevel === 'NONE' && (
          <Alert color="yellow" role="note" p="xs">
            Address and guarantor verifications need a risk level of LOW or higher, in test mode too: your organization is at NONE until an account manager approves a
            request (step 4). The BVN lookup works now.
          </Alert>
        )}
        <Text size="sm">
          An address verification finishes when a field agent visits. In test mode you finish it yourself with the test helper (use the <Code>id</Code> the previous call answered):
        </Text>
        <CopyField label="Complete the test address (curl)" value={curl.complete} multiline />
        <Text size="sm">
          Your calls show up under <Anchor component={Link} to="/verifications">Verifications</Anchor> in test mode
          {testKey?.lastUsedAt ? '; your test secret has been used already.' : '.'}
        </Text>
      </Step>

      <Step number={3} title="Receive webhooks" done={!!endpoint.data?.url}>
        <Text size="sm">
          Address, business, guarantor and employment verifications finish later and tell your server by a signed webhook.{' '}
          {endpoint.data?.url ? (
            <>
              Test events go to <Code>{endpoint.data.url}</Code>.
            </>
          ) : (
            'No test webhook URL is set yet.'
          )}
        </Text>
        <Group>
          <Button component={Link} to="/webhooks" variant="light" size="xs">
            {endpoint.data?.url ? 'Send a test event' : 'Set a webhook URL'}
          </Button>
        </Group>
      </Step>

      <Step number={4} title="Go live" done={!!access.data?.enabled}>
        <AccessStatus access={access.data} />
        <List size="sm" spacing={4}>
          <List.Item>
            {can('access.request') ? (
              <Anchor inherit component={Link} to="/api-access">
                Request live access
              </Anchor>
            ) : (
              'An owner or admin requests live access'
            )}{' '}
            with a risk level and an identity payload type; an account manager approves it.
          </List.Item>
          <List.Item>
            Fund the wallet on{' '}
            <Anchor inherit component={Link} to="/billing">
              Usage &amp; billing
            </Anchor>
            : live checks are charged.
          </List.Item>
          <List.Item>
            Switch your server to the live secret (<Code>sk_live_…</Code>) from{' '}
            <Anchor inherit component={Link} to="/api-keys">
              API keys
            </Anchor>{' '}
            and set the live webhook URL.
          </List.Item>
        </List>
      </Step>
    </Stack>
  );
}

function VerifyEmail({ email }: { email: string }) {
  const resend = useMutation({ mutationFn: () => unwrap(api.POST('/api/auth/resend-verification')) });
  return (
    <Alert color="yellow" title="Confirm your email address" role="status">
      <Stack gap="xs" align="flex-start">
        <Text size="sm">We sent a link to {email}. Open it to confirm the address: asking for live access needs it.</Text>
        <Button size="xs" variant="white" onClick={() => resend.mutate()} loading={resend.isPending} disabled={resend.isSuccess}>
          {resend.isSuccess ? 'Sent: check your inbox' : 'Send the email again'}
        </Button>
        {resend.error && (
          <Text size="sm" c="red" role="alert">
            {errorMessage(resend.error)}
          </Text>
        )}
      </Stack>
    </Alert>
  );
}

function AccessStatus({ access }: { access: ReturnType<typeof useAccess>['data'] }) {
  if (!access) return null;
  const latest = access.requests[0];
  return (
    <Group gap="xs">
      <Text size="sm">Live API access:</Text>
      {access.enabled ? (
        <Badge color="teal">
          Enabled · risk {access.riskLevel} · payload {access.payloadType}
        </Badge>
      ) : latest?.status === 'pending' ? (
        <Badge color="yellow">Requested, waiting for an account manager</Badge>
      ) : latest?.status === 'declined' ? (
        <Badge color="red">Declined: see API access</Badge>
      ) : (
        <Badge color="gray">Not requested</Badge>
      )}
    </Group>
  );
}

function Step({ number, title, done = false, children }: { number: number; title: string; done?: boolean; children: ReactNode }) {
  return (
    <Paper withBorder p="md" radius="md" component="section" aria-labelledby={`step-${number}`}>
      <Stack gap="sm">
        <Group justify="space-between" wrap="nowrap">
          <Title order={2} size="h4" id={`step-${number}`}>
            {number}. {title}
          </Title>
          {done && (
            <Badge color="teal" variant="light">
              Done
            </Badge>
          )}
        </Group>
        {children}
      </Stack>
    </Paper>
  );
}
