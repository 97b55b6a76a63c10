import { Alert, Badge, Button, Card, CopyButton, Group, Modal, Select, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, errorMessage, unwrap } from '../../api/client';
import { formatDateTime } from '../../components/format';
import { CopyField, PageHeader } from '../../components/layout-parts';
import { ErrorAlert, LoadingState } from '../../components/states';
import type { Mode } from '../context';
import { useCurrentOrg } from '../context';
import { keys as queryKeys, useKeys } from './queries';
import type { Key } from './types';

const OVERLAPS = [
  { value: '0', label: 'No overlap: the old secret stops now' },
  { value: '1', label: '1 hour' },
  { value: '12', label: '12 hours' },
  { value: '24', label: '24 hours' },
];

// As CopyField's: monospace with room for descenders, so underscores stay visible.
const MONO = { input: { fontFamily: 'monospace', lineHeight: 1.6, paddingTop: 6, paddingBottom: 6, height: 'auto' } };

const title = (mode: Mode) => (mode === 'test' ? 'Test secret' : 'Live secret');

export function ApiKeysPage() {
  const { orgId, can } = useCurrentOrg();
  const keys = useKeys(orgId);
  const [rolling, setRolling] = useState<Mode | null>(null);
  if (keys.isPending) return <LoadingState label="Loading your API keys…" />;
  if (keys.isError) return <ErrorAlert error={keys.error} onRetry={() => void keys.refetch()} />;
  return (
    <Stack gap="lg">
      <PageHeader
        title="API keys"
        description="Send a secret as “Authorization: Bearer <secret>” from your server, never from a browser or an app. The test secret runs in the sandbox; the live secret is charged and is shown only when it is made."
      />
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        {keys.data.data.map((key) => (
          <KeyCard key={key.mode} secret={key} onRoll={can('secrets.roll') ? () => setRolling(key.mode) : undefined} />
        ))}
      </SimpleGrid>
      {!can('secrets.test.read') && (
        <Alert color="gray" role="note">
          Your role shows secrets by their last four characters only. Developers, admins and owners see the test secret and roll secrets.
        </Alert>
      )}
      {rolling && <RollModal mode={rolling} current={keys.data.data.find((k) => k.mode === rolling)!} onClose={() => setRolling(null)} />}
    </Stack>
  );
}

function KeyCard({ secret, onRoll }: { secret: Key; onRoll: (() => void) | undefined }) {
  const { mode } = secret;
  return (
    <Card withBorder component="section" aria-labelledby={`key-${mode}`}>
      <Stack gap="sm">
        <Group justify="space-between">
          <Title order={2} size="h4" id={`key-${mode}`}>
            {title(mode)}
          </Title>
          <Badge color={mode === 'test' ? 'orange' : 'blue'}>{mode}</Badge>
        </Group>
        {secret.value ? (
          <RevealableSecret value={secret.value} hint={secret.hint} />
        ) : (
          <Stack gap={2}>
            <Text size="sm" fw={500}>
              {mode === 'live' ? 'Ends with' : 'Secret'}
            </Text>
            <Text ff="monospace" aria-label={`${mode} secret hint`}>
              {secret.hint}
            </Text>
            {mode === 'live' && (
              <Text size="xs" c="dimmed">
                Shown in full only when it is made. Lost it? Roll it to make a new one.
              </Text>
            )}
          </Stack>
        )}
        <Text size="sm" c="dimmed">
          Created {formatDateTime(secret.createdAt)} · Last used {secret.lastUsedAt ? formatDateTime(secret.lastUsedAt) : 'never'}
        </Text>
        {secret.previous && (
          <Alert color="yellow" p="xs" title="The previous secret still works">
            <Text size="sm">
              <Text span ff="monospace" inherit>
                {secret.previous.hint}
              </Text>{' '}
              keeps working until {formatDateTime(secret.previous.expiresAt)} · last used {secret.previous.lastUsedAt ? formatDateTime(secret.previous.lastUsedAt) : 'never'}.
            </Text>
          </Alert>
        )}
        {onRoll && (
          <Group>
            <Button variant="light" color={mode === 'live' ? 'red' : 'blue'} onClick={onRoll}>
              Roll {mode} secret
            </Button>
          </Group>
        )}
      </Stack>
    </Card>
  );
}

/** The test secret, hidden until asked (screens are shared and recorded); copying works either way. */
function RevealableSecret({ value, hint }: { value: string; hint: string }) {
  const [shown, setShown] = useState(false);
  return (
    <Stack gap={4}>
      {shown ? (
        <CopyField label="Test secret value" value={value} />
      ) : (
        <TextInput label="Test secret value (hidden)" value={hint.replace('…', '••••••••••••••••')} readOnly styles={MONO} />
      )}
      <Group gap="xs">
        <Button size="compact-sm" variant="default" onClick={() => setShown(!shown)}>
          {shown ? 'Hide test secret' : 'Reveal test secret'}
        </Button>
        {!shown && (
          <CopyButton value={value}>
            {({ copied, copy }) => (
              <Button size="compact-sm" variant="light" onClick={copy}>
                {copied ? 'Copied' : 'Copy test secret'}
              </Button>
            )}
          </CopyButton>
        )}
      </Group>
      <Text size="xs" c="dimmed">
        Sandbox only: the fixed test identities, never charged.
      </Text>
    </Stack>
  );
}

function RollModal({ mode, current, onClose }: { mode: Mode; current: Key; onClose(): void }) {
  const { orgId } = useCurrentOrg();
  const queryClient = useQueryClient();
  const [overlap, setOverlap] = useState(mode === 'live' ? '1' : '0');
  const roll = useMutation({
    mutationFn: () => unwrap(api.POST('/api/orgs/{orgId}/keys/{mode}/roll', { params: { path: { orgId, mode } }, body: { overlapHours: Number(overlap) } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.keys(orgId) }),
  });
  const rolled = roll.data;
  return (
    <Modal opened onClose={onClose} title={`Roll the ${mode} secret`} centered closeOnClickOutside={!rolled}>
      {rolled ? (
        <Stack>
          <Alert color={mode === 'live' ? 'red' : 'teal'} title={mode === 'live' ? 'Copy it now, it will not be shown again' : 'Copy the new secret'} role="alert">
            {mode === 'live'
              ? 'Vouch keeps only a fingerprint of the live secret. Put it in your server’s configuration before you close this window.'
              : 'It is the test secret from now on; this page keeps showing it.'}
          </Alert>
          <CopyField label={`New ${mode} secret`} value={rolled.secret} />
          <Text size="sm">
            {rolled.previousHint ? (
              new Date(rolled.previousExpiresAt).getTime() > Date.now() ? (
                <>
                  The old secret <Text span ff="monospace" inherit>{rolled.previousHint}</Text> keeps working until {formatDateTime(rolled.previousExpiresAt)}.
                </>
              ) : (
                <>The old secret stopped working.</>
              )
            ) : null}
          </Text>
          <Group justify="flex-end">
            <Button onClick={onClose}>I have copied it</Button>
          </Group>
        </Stack>
      ) : (
        <Stack>
          <Text size="sm">
            A new {mode} secret replaces <Text span ff="monospace" inherit>{current.hint}</Text>. Choose how long the current one keeps working, so you can deploy the new one
            first.
          </Text>
          <Select label="The old secret keeps working for" data={OVERLAPS} value={overlap} onChange={(value) => value && setOverlap(value)} allowDeselect={false} />
          {overlap === '0' && (
            <Text size="sm" c="red">
              Requests with the current {mode} secret fail from the moment you roll.
            </Text>
          )}
          {roll.error && (
            <Alert color="red" role="alert" title="The secret was not rolled">
              {errorMessage(roll.error)}
            </Alert>
          )}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button color={mode === 'live' ? 'red' : 'blue'} loading={roll.isPending} onClick={() => roll.mutate()}>
              Roll secret
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
