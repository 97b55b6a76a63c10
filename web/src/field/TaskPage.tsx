import { Alert, Anchor, Badge, Button, Card, Group, List, Stack, Text, Title } from '@mantine/core';
import { IconMapPin, IconPhone } from '@tabler/icons-react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import type { ReactNode } from 'react';
import { api, errorMessage, unwrap } from '../api/client';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { formatDue, KIND_LABEL, useFieldTasks, type FieldTask, type TaskList } from './api';
import { useOutbox } from './outbox';

/** One task of the agent's, from the list (fetched, or cached on the phone). */
export function useFieldTask() {
  const params = useParams({ strict: false }) as { kind?: string; id?: string };
  const kind: FieldTask['kind'] = params.kind === 'business' ? 'business' : 'address';
  const id = Number(params.id);
  const queryClient = useQueryClient();
  const list = useFieldTasks(undefined);
  const matches = (task: FieldTask) => task.kind === kind && task.id === id;
  let task = list.data?.data.find(matches);
  if (!task) {
    for (const [, data] of queryClient.getQueriesData<TaskList>({ queryKey: ['field', 'tasks'] })) {
      task = data?.data.find(matches);
      if (task) break;
    }
  }
  return { task, list, kind, id };
}

/** A visit: where, whom to ask for, what to capture; start it and write the report. */
export function TaskPage() {
  const { task, list, kind, id } = useFieldTask();
  const queryClient = useQueryClient();
  const outbox = useOutbox();
  const start = useMutation({
    mutationFn: () => unwrap(api.POST('/api/field/tasks/{kind}/{id}/start', { params: { path: { kind, id: String(id) } } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['field', 'tasks'] }),
  });

  if (!task) {
    if (list.isPending) return <LoadingState label="Loading the visit…" />;
    if (list.isError) return <ErrorAlert error={list.error} onRetry={() => void list.refetch()} />;
    return (
      <EmptyState title="This visit is not on your list" action={<Anchor component={Link} to="/field">Back to your visits</Anchor>}>
        It was completed, cancelled by the customer, or given to another agent.
      </EmptyState>
    );
  }
  const queued = outbox.find((entry) => entry.kind === task.kind && entry.id === task.id);
  const place = [task.place.street, task.place.city, task.place.lga, task.place.state].filter(Boolean).join(', ');
  return (
    <Stack gap="sm">
      <Anchor component={Link} to="/field" size="sm">
        ← Your visits
      </Anchor>
      <Group justify="space-between" wrap="nowrap" align="flex-start">
        <Title order={1} size="h3">
          {task.business?.name || task.place.street}
        </Title>
        <Badge variant="light" color={task.kind === 'business' ? 'grape' : 'blue'} style={{ flexShrink: 0 }}>
          {KIND_LABEL[task.kind]}
        </Badge>
      </Group>
      <Card withBorder padding="sm">
        <Stack gap={6}>
          <Detail label="Address">{place}</Detail>
          {task.place.landmark && <Detail label="Landmark">{task.place.landmark}</Detail>}
          <Detail label={task.kind === 'business' ? 'Contact person' : 'Applicant'}>
            {task.contact.name || '—'}
            {task.contact.phone && (
              <>
                {' · '}
                <Anchor href={`tel:${task.contact.phone}`}>
                  <IconPhone size={14} style={{ verticalAlign: 'middle' }} /> {task.contact.phone}
                </Anchor>
              </>
            )}
          </Detail>
          {task.business && (
            <Detail label="Business">
              {task.business.name} ({task.business.type}){task.business.rcNumber && ` · RC ${task.business.rcNumber}`}
            </Detail>
          )}
          <Detail label="Reference">{task.reference || '—'}</Detail>
          <Detail label="Due">
            <Text span inherit c={task.overdue ? 'red.8' : undefined}>
              {formatDue(task)}
            </Text>
          </Detail>
          <Button component="a" href={task.mapsUrl} target="_blank" rel="noopener noreferrer" variant="default" leftSection={<IconMapPin size={16} />} mt={4}>
            Open in maps
          </Button>
        </Stack>
      </Card>
      <Card withBorder padding="sm">
        <Title order={2} size="h5" mb={4}>
          What to capture
        </Title>
        <List size="sm" spacing={4}>
          {task.capture.checklist.map((item) => (
            <List.Item key={item}>{item}</List.Item>
          ))}
          <List.Item>
            {task.capture.photos.min} to {task.capture.photos.max} photos, and your GPS position at the place
          </List.Item>
        </List>
      </Card>
      {queued ? (
        <Alert color={queued.status === 'refused' ? 'red' : 'yellow'} title={queued.status === 'refused' ? 'Your report was refused' : 'Your report is queued'}>
          {queued.status === 'refused' ? queued.note : 'It is kept on this phone and will be sent when online.'}{' '}
          <Anchor component={Link} to="/field">
            See reports on this phone
          </Anchor>
        </Alert>
      ) : (
        <Stack gap="xs">
          {start.error && (
            <Alert color="red" role="alert">
              {errorMessage(start.error)}
            </Alert>
          )}
          {task.visitStartedAt ? (
            <Text size="sm" c="teal.8" role="status">
              Visit started at {new Date(task.visitStartedAt).toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' })}.
            </Text>
          ) : (
            <Button variant="light" onClick={() => start.mutate()} loading={start.isPending}>
              Start visit
            </Button>
          )}
          <Button component={Link} to={`/field/tasks/${task.kind}/${task.id}/report`} size="md">
            Write the report
          </Button>
        </Stack>
      )}
    </Stack>
  );
}

function Detail({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div>
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="sm">{children}</Text>
    </div>
  );
}
