import { Alert, Anchor, Badge, Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import { IconMapPin, IconRefresh } from '@tabler/icons-react';
import { Link } from '@tanstack/react-router';
import { useEffect } from 'react';
import { EmptyState, ErrorAlert, LoadingState } from '../components/states';
import { formatDue, KIND_LABEL, taskLabel, useFieldTasks, type FieldTask } from './api';
import { formatAccuracy, useLocation, type LocationState } from './location';
import { Outbox } from './OutboxPanel';
import { useOutbox } from './outbox';

/** The agent's open visits: nearest first when the phone shares its position, else the soonest due first. */
export function TasksPage() {
  const { state: location, locate } = useLocation();
  // Asked on opening: the browser prompts once, then remembers the agent's answer.
  useEffect(() => locate(), [locate]);
  const fix = location.status === 'located' ? location.fix : location.status !== 'idle' ? location.last : undefined;
  const tasks = useFieldTasks(fix);
  const outbox = useOutbox();
  const queuedFor = (task: FieldTask) => outbox.find((entry) => entry.kind === task.kind && entry.id === task.id);

  return (
    <Stack gap="sm">
      <Outbox />
      <Group justify="space-between" align="center" wrap="nowrap">
        <Title order={1} size="h3">
          Your visits
        </Title>
        <Button variant="light" size="xs" leftSection={<IconRefresh size={14} />} onClick={() => void tasks.refetch()} loading={tasks.isFetching}>
          Refresh
        </Button>
      </Group>
      <LocationLine state={location} onLocate={locate} />
      {tasks.data?.savedAt && (
        <Alert color="orange" variant="light" role="status">
          No connection: this is the list as it was at {new Date(tasks.data.savedAt).toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit' })}. Reports you file are kept on the phone and sent when the connection returns.
        </Alert>
      )}
      {tasks.isPending ? (
        <LoadingState label="Loading your visits…" />
      ) : tasks.isError ? (
        <ErrorAlert error={tasks.error} onRetry={() => void tasks.refetch()} title="Your visits could not be loaded" />
      ) : tasks.data.data.length === 0 ? (
        <EmptyState title="No visits assigned to you">
          New visits appear here as customers ask for them in the states you cover. Pull Refresh to look again.
        </EmptyState>
      ) : (
        <Stack gap="sm" component="ul" p={0} m={0} style={{ listStyle: 'none' }} aria-label="Visits">
          {tasks.data.data.map((task) => (
            <li key={`${task.kind}-${task.id}`}>
              <TaskCard task={task} queued={queuedFor(task)?.status} />
            </li>
          ))}
        </Stack>
      )}
    </Stack>
  );
}

function LocationLine({ state, onLocate }: { state: LocationState; onLocate: () => void }) {
  if (state.status === 'located') {
    return (
      <Text size="sm" c="dimmed" role="status">
        <IconMapPin size={14} style={{ verticalAlign: 'middle' }} /> Nearest first, from your position ({formatAccuracy(state.fix.accuracy)}).{' '}
        <Anchor component="button" type="button" size="sm" onClick={onLocate}>
          Update
        </Anchor>
      </Text>
    );
  }
  if (state.status === 'failed') {
    return (
      <Alert color="yellow" variant="light" title="Sorted by due date" role="status">
        <Text size="sm">{state.message}. With your position shared, the nearest visits come first.</Text>
        <Button size="xs" variant="white" mt="xs" onClick={onLocate}>
          Share my location
        </Button>
      </Alert>
    );
  }
  return (
    <Text size="sm" c="dimmed" role="status">
      Finding your position… sorted by due date meanwhile.
    </Text>
  );
}

function TaskCard({ task, queued }: { task: FieldTask; queued?: 'queued' | 'refused' }) {
  const title = task.business?.name || task.place.street;
  return (
    <Card withBorder padding="sm" radius="md">
      <Stack gap={4}>
        <Group justify="space-between" wrap="nowrap" align="flex-start">
          <Text fw={700} lineClamp={2}>
            {title}
          </Text>
          <Badge variant="light" color={task.kind === 'business' ? 'grape' : 'blue'} style={{ flexShrink: 0 }}>
            {KIND_LABEL[task.kind]}
          </Badge>
        </Group>
        <Text size="sm">
          {[task.business ? task.place.street : '', task.place.city, task.place.lga, task.place.state].filter(Boolean).join(', ')}
        </Text>
        {task.place.landmark && (
          <Text size="sm" c="dimmed">
            Landmark: {task.place.landmark}
          </Text>
        )}
        {task.reference && (
          <Text size="xs" c="dimmed">
            Ref. {task.reference}
          </Text>
        )}
        <Group gap="xs">
          <Text size="sm" c={task.overdue ? 'red.8' : undefined} fw={task.overdue ? 700 : undefined}>
            {formatDue(task)}
          </Text>
          {task.visitStartedAt && (
            <Badge size="sm" color="teal" variant="light">
              Visit started
            </Badge>
          )}
          {queued && (
            <Badge size="sm" color={queued === 'refused' ? 'red' : 'yellow'} variant="light">
              {queued === 'refused' ? 'Report refused' : 'Report queued'}
            </Badge>
          )}
        </Group>
        {task.distanceKm !== null && (
          <Text size="sm" c="dimmed">
            About {Math.round(task.distanceKm)} km to the centre of {task.place.state}
          </Text>
        )}
        <Group gap="xs" mt={4} grow>
          <Button component={Link} to={`/field/tasks/${task.kind}/${task.id}`} size="sm" aria-label={`Open ${taskLabel(task)}`}>
            Open
          </Button>
          <Button component="a" href={task.mapsUrl} target="_blank" rel="noopener noreferrer" variant="default" size="sm" leftSection={<IconMapPin size={16} />} aria-label={`Open in maps: ${title}`}>
            Open in maps
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}
