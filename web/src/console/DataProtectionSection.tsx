import { Badge, Button, Card, Checkbox, Group, Modal, NumberInput, Radio, Stack, Table, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ApiRequestError, errorMessage, unwrap } from '../api/client';
import type { operations } from '../api/schema';
import { ErrorAlert, LoadingState } from '../components/states';

type Retention = operations['consoleGetRetention']['responses'][200]['content']['application/json'];
type RetentionBody = NonNullable<operations['consoleSetRetention']['requestBody']>['content']['application/json'];
type Key = keyof Retention['custom'];

const KEYS: { key: Key; label: string; what: string }[] = [
  { key: 'lookupDays', label: 'Identity lookups', what: 'the masked number on usage rows and ledger descriptions' },
  { key: 'verificationDays', label: 'Verifications', what: 'completed or cancelled ones: personal fields blanked, the row kept' },
  { key: 'photoDays', label: 'Photos', what: "field agents' visit photos" },
  { key: 'webhookDays', label: 'Webhooks', what: 'the bodies of ended webhook deliveries' },
];

const MIN_DAYS = 1;
const MAX_DAYS = 3650;

function days(n: number): string {
  return `${n.toLocaleString('en-GB')} ${n === 1 ? 'day' : 'days'}`;
}

/**
 * The organization's data protection settings (docs/data-protection.md): how long its personal
 * data is kept, and whether its requests must carry the person's consent. Both audited server-side.
 */
export function DataProtectionSection({ orgId, name }: { orgId: string; name: string }) {
  const [editing, setEditing] = useState(false);
  const retention = useQuery({
    queryKey: ['console', 'organization', orgId, 'retention'],
    queryFn: () => unwrap(api.GET('/api/console/organizations/{orgId}/retention', { params: { path: { orgId } } })),
  });
  return (
    <Card withBorder component="section" aria-labelledby="data-protection-title">
      <Stack gap="sm">
        <div>
          <Title order={3} size="h4" id="data-protection-title">
            Data protection
          </Title>
          <Text size="sm" c="dimmed">
            How long this organization's personal data is kept, and whether its requests must carry the person's consent. Changes are written to the audit log.
          </Text>
        </div>
        <Stack gap={6}>
          <Group justify="space-between" wrap="wrap" gap="xs">
            <Title order={4} size="h5" id="retention-title">
              Retention periods
            </Title>
            <Button size="xs" variant="default" onClick={() => setEditing(true)} disabled={!retention.data}>
              Edit retention periods
            </Button>
          </Group>
          {retention.isPending ? (
            <LoadingState label="Loading the retention periods…" />
          ) : retention.isError ? (
            <ErrorAlert error={retention.error} onRetry={() => void retention.refetch()} title="The retention periods could not be loaded" />
          ) : (
            <Table aria-labelledby="retention-title" verticalSpacing={4}>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Data</Table.Th>
                  <Table.Th>Kept for</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {KEYS.map(({ key, label, what }) => (
                  <Table.Tr key={key}>
                    <Table.Td>
                      <Text size="sm">{label}</Text>
                      <Text size="xs" c="dimmed">
                        {what}
                      </Text>
                    </Table.Td>
                    <Table.Td>
                      <Text size="sm" data-testid={`retention-${key}`}>
                        {days(retention.data[key])}{' '}
                        {retention.data.custom[key] ? (
                          <Badge size="xs" color="grape" variant="light">
                            set for this organization
                          </Badge>
                        ) : (
                          <Badge size="xs" color="gray" variant="light">
                            default
                          </Badge>
                        )}
                      </Text>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
        </Stack>
        <ConsentSetting orgId={orgId} />
      </Stack>
      {editing && retention.data && <RetentionModal retention={retention.data} name={name} onClose={() => setEditing(false)} />}
    </Card>
  );
}

function ConsentSetting({ orgId }: { orgId: string }) {
  const queryClient = useQueryClient();
  const [choice, setChoice] = useState<string | null>(null);
  const consent = useQuery({
    queryKey: ['console', 'organization', orgId, 'consent'],
    queryFn: () => unwrap(api.GET('/api/console/organizations/{orgId}/consent', { params: { path: { orgId } } })),
  });
  const save = useMutation({
    mutationFn: (consentRequired: boolean) => unwrap(api.PUT('/api/console/organizations/{orgId}/consent', { params: { path: { orgId } }, body: { consentRequired } })),
    onSuccess: async (done) => {
      notifications.show({ color: 'green', message: done.consentRequired ? 'Consent is now required' : 'Consent is now optional' });
      setChoice(null);
      await queryClient.invalidateQueries({ queryKey: ['console', 'organization', orgId] });
    },
  });
  if (consent.isPending) return <LoadingState label="Loading the consent setting…" />;
  if (consent.isError) return <ErrorAlert error={consent.error} onRetry={() => void consent.refetch()} title="The consent setting could not be loaded" />;
  const saved = consent.data.consentRequired ? 'required' : 'optional';
  const value = choice ?? saved;
  return (
    <Stack gap={6}>
      <Radio.Group
        label="Consent"
        description="Required: every identity lookup and verification this organization creates must carry the person's consent, or it is refused (400)."
        value={value}
        onChange={setChoice}
        error={save.error ? errorMessage(save.error) : undefined}
      >
        <Group gap="md" mt={6}>
          <Radio value="optional" label="Optional" />
          <Radio value="required" label="Required" />
        </Group>
      </Radio.Group>
      <Group gap="xs">
        <Button size="xs" onClick={() => save.mutate(value === 'required')} disabled={value === saved} loading={save.isPending}>
          Save consent setting
        </Button>
        <Text size="sm" c="dimmed" data-testid="consent-saved">
          Saved: consent {saved}
        </Text>
      </Group>
    </Stack>
  );
}

interface FieldState {
  useDefault: boolean;
  value: string | number;
}

function RetentionModal({ retention, name, onClose }: { retention: Retention; name: string; onClose(): void }) {
  const queryClient = useQueryClient();
  const [fields, setFields] = useState<Record<Key, FieldState>>(
    () => Object.fromEntries(KEYS.map(({ key }) => [key, { useDefault: !retention.custom[key], value: retention[key] }])) as Record<Key, FieldState>,
  );
  const [errors, setErrors] = useState<Partial<Record<Key, string>>>({});
  const save = useMutation({
    mutationFn: (body: RetentionBody) => unwrap(api.PUT('/api/console/organizations/{orgId}/retention', { params: { path: { orgId: retention.orgId } }, body })),
    onSuccess: async () => {
      notifications.show({ color: 'green', message: `Retention periods of ${name} saved` });
      await queryClient.invalidateQueries({ queryKey: ['console', 'organization', retention.orgId] });
      onClose();
    },
    onError: (error) => {
      // The server names the field first ("photoDays must be a whole number of days from 1 to 3650 …"): show it there.
      if (error instanceof ApiRequestError && error.status === 400) {
        const field = KEYS.find(({ key }) => error.message.startsWith(key));
        if (field) setErrors({ [field.key]: error.message.replace(field.key, field.label) });
      }
    },
  });
  const fieldError = save.error instanceof ApiRequestError && save.error.status === 400 && KEYS.some(({ key }) => save.error!.message.startsWith(key));
  const set = (key: Key, change: Partial<FieldState>) => {
    setFields((current) => ({ ...current, [key]: { ...current[key], ...change } }));
    setErrors((current) => ({ ...current, [key]: undefined }));
  };
  const submit = () => {
    const found: Partial<Record<Key, string>> = {};
    const body: Record<string, number | 'default'> = {};
    for (const { key } of KEYS) {
      const field = fields[key];
      if (field.useDefault) body[key] = 'default';
      else if (typeof field.value !== 'number' || !Number.isInteger(field.value)) found[key] = 'Enter a whole number of days, or use the default';
      else body[key] = field.value;
    }
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    save.mutate(body as RetentionBody);
  };
  return (
    <Modal opened onClose={onClose} title={`Retention periods of ${name}`}>
      <Stack gap="md">
        <Text size="sm">
          Days from {MIN_DAYS} to {MAX_DAYS.toLocaleString('en-GB')} (webhooks: at most the server's {days(retention.defaults.webhookDays)}). The retention job applies a change on its next run (hourly).
        </Text>
        {KEYS.map(({ key, label }) => (
          <Stack key={key} gap={4}>
            <NumberInput
              label={`${label} (days)`}
              value={fields[key].useDefault ? retention.defaults[key] : fields[key].value}
              onChange={(value) => set(key, { value })}
              disabled={fields[key].useDefault}
              min={MIN_DAYS}
              allowDecimal={false}
              allowNegative={false}
              clampBehavior="none"
              error={errors[key]}
            />
            <Checkbox
              label={`Use the default for ${label.toLowerCase()} (${days(retention.defaults[key])})`}
              checked={fields[key].useDefault}
              onChange={(event) => set(key, { useDefault: event.currentTarget.checked, value: fields[key].useDefault ? retention.defaults[key] : fields[key].value })}
            />
          </Stack>
        ))}
        {save.error && !fieldError && (
          <Text c="red" size="sm" role="alert">
            {errorMessage(save.error)}
          </Text>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose} disabled={save.isPending}>
            Cancel
          </Button>
          <Button onClick={submit} loading={save.isPending}>
            Save
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
