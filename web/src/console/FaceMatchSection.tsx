import { Badge, Button, Card, Group, NumberInput, Stack, Text, Title } from '@mantine/core';
import { notifications } from '@mantine/notifications';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, ApiRequestError, errorMessage, unwrap } from '../api/client';
import type { operations } from '../api/schema';
import { formatDateTime } from '../components/format';
import { ErrorAlert, LoadingState } from '../components/states';
import { DataTable, type Column } from '../components/table';

type Setting = operations['consoleGetFaceMatchThreshold']['responses'][200]['content']['application/json'];
type Row = Setting['measured']['rows'][number];

const count = (n: number) => n.toLocaleString('en-GB');

/** A share as a percentage with the places a small rate needs (0.007 %, 0.12 %, 12.9 %). */
function percent(part: number, whole: number): string {
  if (whole === 0) return '–';
  const value = (100 * part) / whole;
  const places = value === 0 || value >= 1 ? 1 : value >= 0.1 ? 2 : 3;
  return `${value.toLocaleString('en-GB', { minimumFractionDigits: places, maximumFractionDigits: places })} %`;
}

const rate = (part: number, whole: number) => `${count(part)} (${percent(part, whole)})`;

/**
 * The organization's face-match threshold (docs/operators.md, "Face match threshold"): the one in
 * force, a field to set it within the bounds, a reset to the default, and beside it the error
 * rates measured at each threshold per group, so the operator sees what a change costs and whom.
 */
export function FaceMatchSection({ orgId, name }: { orgId: string; name: string }) {
  const setting = useQuery({
    queryKey: ['console', 'organization', orgId, 'face-match'],
    queryFn: () => unwrap(api.GET('/api/console/organizations/{orgId}/face-match', { params: { path: { orgId } } })),
  });
  return (
    <Card withBorder component="section" aria-labelledby="face-match-title">
      <Stack gap="sm">
        <div>
          <Title order={3} size="h4" id="face-match-title">
            Face match threshold
          </Title>
          <Text size="sm" c="dimmed">
            The lowest score out of 100 at which this organization's face matches (the biometrics endpoint and verification sessions) call two faces one person. Higher falsely matches fewer
            different people and turns away more genuine ones. Changes apply to the next match and are written to the audit log.
          </Text>
        </div>
        {setting.isPending ? (
          <LoadingState label="Loading the face match threshold…" />
        ) : setting.isError ? (
          <ErrorAlert error={setting.error} onRetry={() => void setting.refetch()} title="The face match threshold could not be loaded" />
        ) : (
          <>
            <ThresholdForm setting={setting.data} name={name} />
            <MeasuredTable setting={setting.data} />
          </>
        )}
      </Stack>
    </Card>
  );
}

function ThresholdForm({ setting, name }: { setting: Setting; name: string }) {
  const queryClient = useQueryClient();
  const { min, max } = setting.bounds;
  const [value, setValue] = useState<string | number>(setting.matchingThreshold);
  const [fieldError, setFieldError] = useState<string | undefined>();
  const save = useMutation({
    mutationFn: (matchingThreshold: number | 'default') =>
      unwrap(api.PUT('/api/console/organizations/{orgId}/face-match', { params: { path: { orgId: setting.orgId } }, body: { matchingThreshold } })),
    onSuccess: async (saved) => {
      notifications.show({ color: 'green', message: `Face match threshold of ${name}: ${saved.matchingThreshold}${saved.custom ? '' : ' (the default)'}` });
      setValue(saved.matchingThreshold);
      await queryClient.invalidateQueries({ queryKey: ['console', 'organization', setting.orgId, 'face-match'] });
    },
    onError: (error) => {
      // The server names the field ("matchingThreshold must be a whole number from 35 to 50 …"): show it there.
      if (error instanceof ApiRequestError && error.status === 400) setFieldError(error.message.replace(/^matchingThreshold/, 'The threshold'));
    },
  });
  const submit = () => {
    if (typeof value !== 'number') {
      setFieldError(`Enter a whole number from ${min} to ${max}`);
      return;
    }
    save.mutate(value);
  };
  const otherError = save.error && !(save.error instanceof ApiRequestError && save.error.status === 400);
  return (
    <Stack gap={6}>
      <Text size="sm" data-testid="face-match-in-force">
        In force: <strong>{setting.matchingThreshold}</strong>{' '}
        {setting.custom ? (
          <Badge size="xs" color="grape" variant="light">
            set for this organization
          </Badge>
        ) : (
          <Badge size="xs" color="gray" variant="light">
            default
          </Badge>
        )}
        {setting.updatedAt && (
          <Text span size="xs" c="dimmed">
            {' '}
            last changed {formatDateTime(setting.updatedAt)}
          </Text>
        )}
      </Text>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <Stack gap="xs" maw={360}>
          <NumberInput
            label="Face match threshold"
            description={`A whole number from ${min} to ${max}; the default is ${setting.defaultThreshold}`}
            value={value}
            onChange={(next) => {
              setValue(next);
              setFieldError(undefined);
            }}
            allowDecimal={false}
            allowNegative={false}
            clampBehavior="none"
            error={fieldError}
          />
          <Group gap="xs">
            <Button type="submit" size="sm" loading={save.isPending && save.variables !== 'default'} disabled={save.isPending}>
              Save threshold
            </Button>
            <Button
              variant="default"
              size="sm"
              onClick={() => {
                setFieldError(undefined);
                save.mutate('default');
              }}
              loading={save.isPending && save.variables === 'default'}
              disabled={!setting.custom || save.isPending}
            >
              Reset to default ({setting.defaultThreshold})
            </Button>
          </Group>
        </Stack>
      </form>
      {otherError && (
        <Text c="red" size="sm" role="alert">
          {errorMessage(save.error)}
        </Text>
      )}
    </Stack>
  );
}

/** The measured error rates at each threshold an operator may set, the default's row and the one in force marked. */
function MeasuredTable({ setting }: { setting: Setting }) {
  const { measured } = setting;
  const first = measured.rows[0];
  if (!first) return null;
  const groupColumns = (key: 'blackBlack' | 'otherOther', label: string): Column<Row>[] => [
    {
      key: `${key}-fm`,
      header: `${label} false matches (of ${count(first[key].impostorPairs)} pairs of different people)`,
      cell: (row) => rate(row[key].falseMatches, row[key].impostorPairs),
      align: 'right',
    },
    {
      key: `${key}-fnm`,
      header: `${label} genuine rejected (of ${count(first[key].genuinePairs)} pairs of one person)`,
      cell: (row) => rate(row[key].falseNonMatches, row[key].genuinePairs),
      align: 'right',
    },
  ];
  const columns: Column<Row>[] = [
    {
      key: 'score',
      header: 'Threshold',
      cell: (row) => (
        <Group gap={4}>
          <Text size="sm" fw={row.score === setting.matchingThreshold ? 700 : undefined}>
            {row.score}
          </Text>
          {row.score === setting.defaultThreshold && (
            <Badge size="xs" color="gray" variant="light">
              default
            </Badge>
          )}
          {setting.custom && row.score === setting.matchingThreshold && (
            <Badge size="xs" color="grape" variant="light">
              in force
            </Badge>
          )}
        </Group>
      ),
    },
    ...groupColumns('blackBlack', 'Black–Black'),
    ...groupColumns('otherOther', 'Other–other'),
  ];
  return (
    <Stack gap={4}>
      <Title order={4} size="h5">
        Measured error rates at each threshold
      </Title>
      <DataTable caption="Measured error rates at each threshold" columns={columns} rows={measured.rows} rowKey={(row) => String(row.score)} minWidth={720} />
      <Text size="xs" c="dimmed">
        Model {measured.model}, measured on {measured.measuredOn} on {count(measured.photos)} labelled photos of {count(measured.people)} people (Labeled Faces in the Wild: public figures in news
        photos, not Nigerian ID photos). Pairs whose score is at or above the threshold match. The default was chosen so that at most 0.1 % of pairs of two different Black people match.
      </Text>
    </Stack>
  );
}
