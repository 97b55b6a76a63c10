import { Alert, Badge, Button, Card, Group, Modal, Select, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent } from 'react';
import { api, errorMessage, unwrap } from '../../api/client';
import { formatDateTime } from '../../components/format';
import { CopyField, PageHeader } from '../../components/layout-parts';
import { ErrorAlert, LoadingState } from '../../components/states';
import { fieldError, formError } from '../auth/form-errors';
import { useCurrentOrg, useMode, type Mode } from '../context';
import { DeliveryLog } from './DeliveryLog';
import { keys, useEndpoint } from './queries';
import { SIGNINGS, type Endpoint, type Signing } from './types';

export function WebhooksPage() {
  const { orgId } = useCurrentOrg();
  const [mode] = useMode();
  const endpoint = useEndpoint(orgId, mode);
  return (
    <Stack gap="lg">
      <PageHeader
        title="Webhooks"
        description={
          <>
            Where Vouch sends the <b>{mode}</b> events of your verifications: signed with Standard Webhooks (<code>webhook-id</code>, <code>webhook-timestamp</code>,{' '}
            <code>webhook-signature</code>) or the VerifyMe way (<code>x-verifyme-signature</code>), as you choose, and retried for about 3 days until your endpoint
            answers 2xx. The mode switch at the top changes which endpoint you see.
          </>
        }
      />
      {endpoint.isPending ? (
        <LoadingState label="Loading your webhook settings…" />
      ) : endpoint.isError ? (
        <ErrorAlert error={endpoint.error} onRetry={() => void endpoint.refetch()} />
      ) : (
        // Keyed by mode and organization: nothing typed or revealed for one shows in the other.
        <Settings key={`${orgId}-${mode}`} mode={mode} endpoint={endpoint.data} />
      )}
      <DeliveryLog key={`${orgId}-${mode}`} mode={mode} />
    </Stack>
  );
}

function Settings({ mode, endpoint }: { mode: Mode; endpoint: Endpoint }) {
  const { orgId, can } = useCurrentOrg();
  const queryClient = useQueryClient();
  const manage = can('webhooks.manage');
  const params = { params: { path: { orgId }, query: { mode } } };
  const [url, setUrl] = useState(endpoint.url ?? '');
  useEffect(() => setUrl(endpoint.url ?? ''), [endpoint.url]);
  const [signing, setSigning] = useState<Signing>(endpoint.signing ?? 'standard');
  useEffect(() => setSigning(endpoint.signing ?? 'standard'), [endpoint.signing]);
  const refreshEndpoint = () => queryClient.invalidateQueries({ queryKey: keys.endpoint(orgId, mode) });
  const refreshLog = () => queryClient.invalidateQueries({ queryKey: keys.deliveries(orgId, mode) });

  const save = useMutation({ mutationFn: () => unwrap(api.PUT('/api/orgs/{orgId}/webhooks', { ...params, body: { url: url.trim(), signing } })), onSuccess: refreshEndpoint });
  const test = useMutation({ mutationFn: () => unwrap(api.POST('/api/orgs/{orgId}/webhooks/test', params)), onSuccess: refreshLog });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  const general = formError(save.error, ['url', 'signing']);
  const changed = url.trim() !== (endpoint.url ?? '') || signing !== (endpoint.signing ?? 'standard');

  return (
    <>
      <Card withBorder component="form" noValidate onSubmit={submit} aria-labelledby="webhook-endpoint">
        <Stack>
          <Group justify="space-between">
            <Title order={2} size="h4" id="webhook-endpoint">
              Endpoint
            </Title>
            <Badge color={mode === 'test' ? 'orange' : 'blue'}>{mode}</Badge>
          </Group>
          {general && (
            <Alert color="red" role="alert" title="The URL was not saved">
              {general}
            </Alert>
          )}
          {save.isSuccess && !changed && (
            <Alert color="teal" role="status">
              Saved: {mode} events now go to this URL. They are signed {SIGNINGS.find((s) => s.value === endpoint.signing)?.short ?? 'as chosen'}.
            </Alert>
          )}
          <TextInput
            label={`Endpoint URL (${mode})`}
            description="An https URL on the public internet that answers 2xx within 10 seconds. A receiver on your own machine or network (localhost, 10.x, 192.168.x) is refused unless the server runs with VOUCH_ALLOW_PRIVATE_URLS=1, for development"
            placeholder="https://api.example.com/webhooks/vouch"
            value={url}
            onChange={(e) => setUrl(e.currentTarget.value)}
            readOnly={!manage}
            error={fieldError(save.error, 'url')?.replace(/^url/, 'The URL')}
            inputMode="url"
          />
          <Select
            label="Signature headers"
            description={`${SIGNINGS.find((s) => s.value === signing)?.meaning ?? ''} Saved with the URL.`}
            data={SIGNINGS.map((s) => ({ value: s.value, label: s.label }))}
            value={signing}
            onChange={(value) => value && setSigning(value as Signing)}
            allowDeselect={false}
            readOnly={!manage}
            error={fieldError(save.error, 'signing')}
          />
          {endpoint.url && (
            <Text size="xs" c="dimmed">
              Set {formatDateTime(endpoint.createdAt)} · changed {formatDateTime(endpoint.updatedAt)}
            </Text>
          )}
          {manage ? (
            <Group>
              <Button type="submit" loading={save.isPending} disabled={!url.trim() || !changed}>
                Save URL
              </Button>
              <Button variant="light" onClick={() => test.mutate()} loading={test.isPending} disabled={!endpoint.url}>
                Send test event
              </Button>
            </Group>
          ) : (
            <Text size="sm" c="dimmed">
              Your role sees the settings and the log; developers, admins and owners change them.
            </Text>
          )}
          {test.isSuccess && (
            <Text size="sm" role="status">
              Test event queued (delivery {test.data.id}): it shows in the log below within seconds.
            </Text>
          )}
          {test.error && (
            <Text size="sm" c="red" role="alert">
              {errorMessage(test.error)}
            </Text>
          )}
        </Stack>
      </Card>
      {endpoint.url && <SigningSecret mode={mode} endpoint={endpoint} manage={manage} />}
    </>
  );
}

function SigningSecret({ mode, endpoint, manage }: { mode: Mode; endpoint: Endpoint; manage: boolean }) {
  const { orgId } = useCurrentOrg();
  const queryClient = useQueryClient();
  const params = { params: { path: { orgId }, query: { mode } } };
  const [secret, setSecret] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const reveal = useMutation({ mutationFn: () => unwrap(api.POST('/api/orgs/{orgId}/webhooks/secret/reveal', params)), onSuccess: (r) => setSecret(r.secret) });
  const rotate = useMutation({
    mutationFn: () => unwrap(api.POST('/api/orgs/{orgId}/webhooks/secret/rotate', params)),
    onSuccess: (r) => {
      setSecret(r.secret);
      setConfirming(false);
      return queryClient.invalidateQueries({ queryKey: keys.endpoint(orgId, mode) });
    },
  });
  return (
    <Card withBorder component="section" aria-labelledby="webhook-secret">
      <Stack gap="sm">
        <Title order={2} size="h4" id="webhook-secret">
          Signing secret
        </Title>
        <Text size="sm" c="dimmed">
          Your endpoint checks each event’s <code>webhook-signature</code> with this secret (any Standard Webhooks library does it), or its{' '}
          <code>x-verifyme-signature</code>: the hex HMAC-SHA512 of the raw body keyed with this whole secret, <code>whsec_</code> included.
        </Text>
        {secret ? (
          <CopyField label="Signing secret value" value={secret} />
        ) : (
          <Text ff="monospace" aria-label="Signing secret hint">
            {endpoint.secretHint}
          </Text>
        )}
        {endpoint.previousSecretExpiresAt && (
          <Text size="sm">Events are also signed with the previous secret until {formatDateTime(endpoint.previousSecretExpiresAt)}, so your endpoint can switch over.</Text>
        )}
        {(reveal.error || rotate.error) && (
          <Alert color="red" role="alert">
            {errorMessage(reveal.error ?? rotate.error)}
          </Alert>
        )}
        {manage && (
          <Group>
            {!secret && (
              <Button variant="default" onClick={() => reveal.mutate()} loading={reveal.isPending}>
                Reveal secret
              </Button>
            )}
            <Button variant="light" color="red" onClick={() => setConfirming(true)}>
              Rotate secret
            </Button>
          </Group>
        )}
      </Stack>
      <Modal opened={confirming} onClose={() => setConfirming(false)} title="Rotate the signing secret?" centered>
        <Stack>
          <Text size="sm">
            Vouch makes a new {mode} signing secret. For 24 hours every event is signed with both the new and the old one (the old one’s VerifyMe signature in{' '}
            <code>x-verifyme-signature-previous</code>), so you can update your endpoint without losing events.
          </Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => setConfirming(false)}>
              Cancel
            </Button>
            <Button color="red" loading={rotate.isPending} onClick={() => rotate.mutate()}>
              Rotate secret
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Card>
  );
}
