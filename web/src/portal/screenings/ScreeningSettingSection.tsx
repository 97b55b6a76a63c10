import { Alert, Card, Stack, Switch, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, errorMessage, unwrap } from '../../api/client';
import { ErrorAlert, LoadingState } from '../../components/states';
import { useCurrentOrg } from '../context';

interface Setting {
  sessions: boolean;
  lookups: boolean;
  businesses: boolean;
}

const SWITCHES: { field: keyof Setting; label: string; description: string }[] = [
  {
    field: 'sessions',
    label: 'Screen the person of every verification session',
    description: 'Unless the session is created with checks.screening: false; the result is part of the session and its webhook.',
  },
  {
    field: 'lookups',
    label: 'Screen the person or company of every identity lookup',
    description: 'A lookup that finds a person screens their registry name and date of birth, a CAC or TIN lookup the company; the answer carries the screening.',
  },
  {
    field: 'businesses',
    label: 'Screen the company of every business verification',
    description: 'When the verification is created; the answer carries the screening, and the verification keeps its id.',
  },
];

/**
 * The organization's standing request for screening: every verification session's person, every
 * identity lookup's person or company, and every business verification's company. Owners and
 * admins switch it (the server refuses anyone else).
 */
export function ScreeningSettingSection() {
  const { orgId, role } = useCurrentOrg();
  const queryClient = useQueryClient();
  const key = ['screening-setting', orgId];
  const setting = useQuery({ queryKey: key, queryFn: () => unwrap(api.GET('/api/orgs/{orgId}/screening-setting', { params: { path: { orgId } } })) });
  const save = useMutation({
    mutationFn: (next: Setting) => unwrap(api.PUT('/api/orgs/{orgId}/screening-setting', { params: { path: { orgId } }, body: next })),
    onSuccess: (saved) => queryClient.setQueryData(key, saved),
  });
  const manages = role === 'owner' || role === 'admin';
  const change = (field: keyof Setting, value: boolean) => {
    if (!setting.data) return;
    save.mutate({ ...setting.data, [field]: value });
  };
  return (
    <Card withBorder component="section" aria-labelledby="screening-setting-title">
      <Stack gap="sm">
        <div>
          <Title order={2} size="h4" id="screening-setting-title">
            Screen automatically
          </Title>
          <Text size="sm" c="dimmed">
            Screen the person or company Vouch finds against every loaded list, without asking for it on each call. Each screening is charged at the screening price in live mode and shows up above.
          </Text>
        </div>
        {setting.isPending ? (
          <LoadingState label="Loading the setting…" />
        ) : setting.isError ? (
          <ErrorAlert error={setting.error} onRetry={() => void setting.refetch()} />
        ) : (
          <>
            {SWITCHES.map(({ field, label, description }) => (
              <Switch
                key={field}
                label={label}
                description={description}
                checked={save.isPending && save.variables ? save.variables[field] : setting.data[field]}
                disabled={!manages || save.isPending}
                onChange={(e) => change(field, e.currentTarget.checked)}
              />
            ))}
            {!manages && (
              <Text size="sm" c="dimmed">
                Your role ({role}) can see this setting; an owner or admin changes it.
              </Text>
            )}
            {save.isError && (
              <Alert color="red" role="alert" title="Not saved">
                {errorMessage(save.error)}
              </Alert>
            )}
            {save.isSuccess && (
              <Text size="sm" c="teal.8" role="status">
                Saved: new sessions, lookups and business verifications follow it.
              </Text>
            )}
          </>
        )}
      </Stack>
    </Card>
  );
}
